import { describe, expect, it } from 'vitest';
import { decodeEnvelope, type DecodeFailure, type DecodeSuccess } from '../../src/wire/index.js';

function lineOf(type: string, payload: unknown): string {
  return JSON.stringify({ ts: '2026-05-01T12:00:00.5Z', type, session_id: 's1', payload });
}

function accepted(type: string, payload: unknown): DecodeSuccess {
  const result = decodeEnvelope(lineOf(type, payload));
  if (!result.ok) throw new Error(`rejected (${result.reason}): ${result.message}`);
  return result;
}

function rejected(type: string, payload: unknown): DecodeFailure {
  const result = decodeEnvelope(lineOf(type, payload));
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.event.payload)}`);
  return result;
}

/** Prints a JSON line with `key` spliced into the payload object, as JSON.stringify cannot. */
function lineWithKey(type: string, payload: object, key: string, value: unknown): string {
  const line = lineOf(type, payload);
  const at = line.indexOf('"payload":{') + '"payload":{'.length;
  return `${line.slice(0, at)}${JSON.stringify(key)}:${JSON.stringify(value)},${line.slice(at)}`;
}

interface Spellings {
  type: string;
  camel: Record<string, unknown>;
  go: Record<string, unknown>;
  snake: Record<string, unknown>;
  /** The typed payload all three decode to. */
  typed: unknown;
}

/** One payload of every event type the decoder types, spelled the three ways it accepts. */
const SPELLINGS: Spellings[] = [
  {
    type: 'tool.invoke',
    camel: {
      id: 'tc_1',
      name: 'search',
      arguments: { q: 'x' },
      turnId: 't1',
      parentCallId: 'tc_0',
      description: 'Web search',
      attributes: { 'mcp.method.name': 'tools/call' },
    },
    go: {
      _schema_version: 1,
      ID: 'tc_1',
      Name: 'search',
      Arguments: { q: 'x' },
      TurnID: 't1',
      ParentCallID: 'tc_0',
      Description: 'Web search',
      Attributes: { 'mcp.method.name': 'tools/call' },
      Sequence: 0,
    },
    snake: {
      id: 'tc_1',
      name: 'search',
      arguments: { q: 'x' },
      turn_id: 't1',
      parent_call_id: 'tc_0',
      description: 'Web search',
      attributes: { 'mcp.method.name': 'tools/call' },
    },
    typed: {
      id: 'tc_1',
      name: 'search',
      arguments: { q: 'x' },
      turnId: 't1',
      parentCallId: 'tc_0',
      description: 'Web search',
      attributes: { 'mcp.method.name': 'tools/call' },
    },
  },
  {
    type: 'tool.result',
    camel: {
      id: 'tc_1',
      name: 'search',
      output: '',
      error: 'timed out',
      errorType: 'timeout',
      cancelled: true,
      turnId: 't1',
      outputStructured: { hits: 0 },
    },
    go: {
      _schema_version: 1,
      ID: 'tc_1',
      Name: 'search',
      Output: '',
      Error: 'timed out',
      ErrorType: 'timeout',
      Cancelled: true,
      TurnID: 't1',
      OutputStructured: { hits: 0 },
      OutputFile: '',
      OutputData: null,
    },
    snake: {
      id: 'tc_1',
      name: 'search',
      output: '',
      error: 'timed out',
      error_type: 'timeout',
      cancelled: true,
      turn_id: 't1',
      output_structured: { hits: 0 },
    },
    typed: {
      id: 'tc_1',
      name: 'search',
      output: '',
      error: 'timed out',
      errorType: 'timeout',
      cancelled: true,
      turnId: 't1',
      outputStructured: { hits: 0 },
    },
  },
  {
    type: 'io.session.start',
    camel: { sessionId: 'abc' },
    go: { SessionID: 'abc' },
    snake: { session_id: 'abc' },
    typed: { sessionId: 'abc' },
  },
  {
    type: 'io.session.end',
    camel: { sessionId: 'abc' },
    go: { SessionID: 'abc' },
    snake: { session_id: 'abc' },
    typed: { sessionId: 'abc' },
  },
  {
    type: 'agent.turn.start',
    camel: { turnId: 't1', iteration: 2, sessionId: 'abc' },
    go: { TurnID: 't1', Iteration: 2, SessionID: 'abc' },
    snake: { turn_id: 't1', iteration: 2, session_id: 'abc' },
    typed: { turnId: 't1', iteration: 2, sessionId: 'abc' },
  },
  {
    type: 'llm.request',
    camel: {
      requestId: 'r1',
      turnId: 't1',
      model: 'gpt-4o',
      role: 'quick',
      maxTokens: 100,
      temperature: 0.5,
      stream: true,
      tools: [{ name: 'search', description: 'Web search' }],
      messages: [{ role: 'user', content: 'hi' }],
    },
    go: {
      RequestID: 'r1',
      TurnID: 't1',
      Model: 'gpt-4o',
      Role: 'quick',
      MaxTokens: 100,
      Temperature: 0.5,
      Stream: true,
      Tools: [{ Name: 'search', Description: 'Web search' }],
      Messages: [{ Role: 'user', Content: 'hi' }],
    },
    snake: {
      request_id: 'r1',
      turn_id: 't1',
      model: 'gpt-4o',
      role: 'quick',
      max_tokens: 100,
      temperature: 0.5,
      stream: true,
      tools: [{ name: 'search', description: 'Web search' }],
    },
    typed: {
      requestId: 'r1',
      turnId: 't1',
      model: 'gpt-4o',
      role: 'quick',
      maxTokens: 100,
      temperature: 0.5,
      stream: true,
      tools: [{ name: 'search', description: 'Web search' }],
    },
  },
  {
    type: 'llm.response',
    camel: {
      requestId: 'r1',
      model: 'gpt-4o-2024-08-06',
      content: 'calling search',
      usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
      finishReason: 'tool_calls',
      costUsd: 0.002,
      toolCalls: [{ id: 'tc_1', name: 'search' }],
    },
    go: {
      RequestID: 'r1',
      Model: 'gpt-4o-2024-08-06',
      Content: 'calling search',
      Usage: { PromptTokens: 120, CompletionTokens: 30, TotalTokens: 150 },
      FinishReason: 'tool_calls',
      CostUSD: 0.002,
      ToolCalls: [{ ID: 'tc_1', Name: 'search' }],
    },
    snake: {
      request_id: 'r1',
      model: 'gpt-4o-2024-08-06',
      content: 'calling search',
      usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150 },
      finish_reason: 'tool_calls',
      cost_usd: 0.002,
      tool_calls: [{ id: 'tc_1', name: 'search' }],
    },
    typed: {
      requestId: 'r1',
      model: 'gpt-4o-2024-08-06',
      content: 'calling search',
      usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
      finishReason: 'tool_calls',
      costUsd: 0.002,
      toolCalls: [{ id: 'tc_1', name: 'search' }],
    },
  },
  {
    type: 'llm.stream.end',
    camel: { requestId: 'r1', usage: { outputTokens: 3 }, finishReason: 'stop' },
    go: { RequestID: 'r1', Usage: { CompletionTokens: 3 }, FinishReason: 'stop' },
    snake: { request_id: 'r1', usage: { output_tokens: 3 }, finish_reason: 'stop' },
    typed: { requestId: 'r1', usage: { outputTokens: 3 }, finishReason: 'stop' },
  },
  {
    type: 'llm.error',
    camel: { requestId: 'r1', error: 'rate limited', errorType: 'rate_limit' },
    go: { RequestID: 'r1', Error: 'rate limited', ErrorType: 'rate_limit' },
    snake: { request_id: 'r1', error: 'rate limited', error_type: 'rate_limit' },
    typed: { requestId: 'r1', error: 'rate limited', errorType: 'rate_limit' },
  },
  {
    type: 'subagent.complete',
    camel: {
      spawnId: 'sp',
      task: 'dig',
      parentTurnId: 't1',
      iterations: 3,
      tokensUsed: { totalTokens: 1832 },
      costUsd: 0.01,
    },
    go: {
      SpawnID: 'sp',
      Task: 'dig',
      ParentTurnID: 't1',
      Iterations: 3,
      TokensUsed: 1832,
      CostUSD: 0.01,
    },
    snake: {
      spawn_id: 'sp',
      task: 'dig',
      parent_turn_id: 't1',
      iterations: 3,
      tokens_used: { total_tokens: 1832 },
      cost_usd: 0.01,
    },
    typed: {
      spawnId: 'sp',
      task: 'dig',
      parentTurnId: 't1',
      iterations: 3,
      tokensUsed: { totalTokens: 1832 },
      costUsd: 0.01,
    },
  },
  {
    type: 'subagent.iteration',
    camel: { spawnId: 'sp', iteration: 2 },
    go: { SpawnID: 'sp', Iteration: 2 },
    snake: { spawn_id: 'sp', iteration: 2 },
    typed: { spawnId: 'sp', iteration: 2 },
  },
];

/** Per event type: the field that pairs the event with its span, as each spelling names it. */
const PAIRING: Array<{ type: string; payload: Record<string, unknown>; field: string }> = [
  { type: 'tool.invoke', payload: { ID: 7, Name: 'search' }, field: 'payload.ID' },
  { type: 'tool.invoke', payload: { id: 'tc_1', name: ['search'] }, field: 'payload.name' },
  { type: 'tool.result', payload: { id: { value: 1 } }, field: 'payload.id' },
  { type: 'llm.response', payload: { request_id: 7 }, field: 'payload.request_id' },
  { type: 'llm.error', payload: { RequestID: true }, field: 'payload.RequestID' },
  { type: 'subagent.complete', payload: { spawn_id: 3 }, field: 'payload.spawn_id' },
  {
    type: 'tool.stream.partial',
    payload: { tool_name: 'search', tool_id: 9, sequence: 1 },
    field: 'payload.tool_id',
  },
];

describe('decodeEnvelope() payload spellings', () => {
  it.each(SPELLINGS)(
    'gives $type the same typed payload from camelCase, Go and snake_case keys',
    ({ type, camel, go, snake, typed }) => {
      const payloads = [camel, go, snake].map((payload) => accepted(type, payload).event.payload);
      expect(payloads).toEqual([typed, typed, typed]);
      for (const payload of [camel, go, snake]) {
        expect(accepted(type, payload).droppedFields).toBeUndefined();
      }
    },
  );

  it('reads camelCase first, then Go, when a payload spells a field twice', () => {
    const payload = accepted('tool.invoke', {
      id: 'tc_1',
      ID: 'tc_go',
      name: 'search',
      turn_id: 't_snake',
      TurnID: 't_go',
    }).event.payload;
    expect(payload).toEqual({ id: 'tc_1', name: 'search', arguments: {}, turnId: 't_go' });
    expect(accepted('io.session.start', { session_id: 'b', sessionId: 'a' }).event.payload).toEqual(
      {
        sessionId: 'a',
      },
    );
  });

  it("passes a stream event's payload through in its one spelling, the seed's snake_case", () => {
    const payload = { tool_name: 'search', tool_id: 'tc_1', turn_id: 't1', sequence: 2 };
    expect(accepted('tool.stream.progress', { ...payload, progress: 0.5 }).event.payload).toEqual({
      ...payload,
      progress: 0.5,
    });
  });

  it.each(PAIRING)(
    'rejects $type whose $field has the wrong type, naming the field as the line spelled it',
    ({ type, payload, field }) => {
      const failure = rejected(type, payload);
      expect(failure.reason).toBe('wrong_type');
      expect(failure.message).toMatch(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')} must be`));
    },
  );

  it('drops another field of the wrong type under any spelling, naming it, and keeps the event', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['tool.invoke', { id: 'tc_1', name: 'ls', parent_call_id: 5 }, 'payload.parent_call_id'],
      ['tool.result', { ID: 'tc_1', ErrorType: 500 }, 'payload.ErrorType'],
      ['io.session.start', { session_id: 42 }, 'payload.session_id'],
      [
        'llm.response',
        { request_id: 'r1', usage: { input_tokens: -1 } },
        'payload.usage.input_tokens',
      ],
      ['agent.turn.end', { Iteration: 'two' }, 'payload.Iteration'],
    ];
    for (const [type, payload, field] of cases) {
      const result = accepted(type, payload);
      expect(result.droppedFields?.map((dropped) => dropped.field)).toEqual([field]);
      expect(result.droppedFields?.[0]?.message).toContain(field);
    }
  });

  it.each(['tool.invoke', 'tool.result', 'tool.stream.partial', 'io.session.start', 'llm.request'])(
    'rejects a %s payload with a __proto__ or an object-valued constructor key, naming it',
    (type) => {
      const base = { id: 'tc_1', name: 'ls', tool_id: 'tc_1', tool_name: 'ls', sessionId: 's' };
      for (const [key, value, path] of [
        ['__proto__', { polluted: true }, 'payload.__proto__'],
        ['__proto__', 'x', 'payload.__proto__'],
        ['constructor', { prototype: { polluted: true } }, 'payload.constructor'],
      ] as const) {
        const result = decodeEnvelope(lineWithKey(type, base, key, value));
        expect(result).toMatchObject({ ok: false, reason: 'hostile_key' });
        expect((result as DecodeFailure).message).toContain(path);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );
});
