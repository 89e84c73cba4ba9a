import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import {
  decodeEnvelope,
  REJECT_REASONS,
  type DecodeFailure,
  type DecodeSuccess,
  type RejectReason,
} from '../../src/wire/index.js';

const EVENT_ID = '6e239bb6c9b289cedd13836db71b1cb6';
const PARENT_ID = '83875f796511a6e430e15bbbbcf8e2ef';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const NOON = BigInt(Date.UTC(2026, 4, 1, 12)) * 1_000_000n;

function envelope(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    seq: 7,
    ts: '2026-05-01T12:00:00.123456789Z',
    type: 'tool.stream.partial',
    event_id: EVENT_ID,
    source: 'plugin.search',
    parent_id: PARENT_ID,
    parent_seq: 5,
    session_id: 's1',
    agent_id: 'a1',
    depth: 0,
    payload: { tool_name: 'search', tool_id: 'tc_1', turn_id: 't1', sequence: 3, payload: '...' },
    ...fields,
  };
}

function line(fields: Record<string, unknown> = {}): string {
  return JSON.stringify(envelope(fields));
}

function accepted(input: string | Uint8Array): DecodeSuccess {
  const result = decodeEnvelope(input);
  if (!result.ok) throw new Error(`rejected (${result.reason}): ${result.message}`);
  return result;
}

function rejected(input: string | Uint8Array, options?: Parameters<typeof decodeEnvelope>[1]) {
  const result = decodeEnvelope(input, options);
  if (result.ok) throw new Error('accepted a line that should be rejected');
  return result satisfies DecodeFailure;
}

describe('decodeEnvelope()', () => {
  describe('with a well-formed line', () => {
    it('returns an EventInit the bus emits as it is', () => {
      const result = accepted(line());
      expect(result.hasEventId).toBe(true);
      expect(result.event).toEqual({
        type: 'tool.stream.partial',
        id: EVENT_ID,
        source: 'plugin.search',
        timeUnixNano: NOON + 123_456_789n,
        payload: {
          tool_name: 'search',
          tool_id: 'tc_1',
          turn_id: 't1',
          sequence: 3,
          payload: '...',
        },
        causation: {
          parentId: PARENT_ID,
          parentSeq: 5,
          sessionId: 's1',
          agentId: 'a1',
          depth: 0,
          sequence: 7,
        },
      });
      const event = new EventBus().emitEvent(result.event);
      expect(event.timestamp.toISOString()).toBe('2026-05-01T12:00:00.123Z');
      expect(event.timeUnixNano).toBe(NOON + 123_456_789n);
    });

    it('decodes bytes the same as text, skipping a leading byte order mark', () => {
      const text = line({ payload: { tool_name: 'sûch', tool_id: 'tc_ü', sequence: 1 } });
      const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
      expect(accepted(new Uint8Array(bytes)).event).toEqual(accepted(text).event);
      expect(accepted(`\ufeff${text}`).event).toEqual(accepted(text).event);
    });

    it('keeps nanoseconds of a timestamp with an offset', () => {
      const result = accepted(line({ ts: '2026-05-01T14:00:00.000000042+02:00' }));
      expect(result.event.timeUnixNano).toBe(NOON + 42n);
    });

    it('returns a valid traceparent and warns about an invalid one without rejecting', () => {
      expect(accepted(line({ traceparent: TRACEPARENT })).traceparent).toBe(TRACEPARENT);
      for (const traceparent of [
        'garbage',
        42,
        TRACEPARENT.toUpperCase(),
        '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      ]) {
        const result = accepted(line({ traceparent }));
        expect(result.traceparent).toBeUndefined();
        expect(result.warnings).toEqual(['bad_traceparent']);
      }
      expect(accepted(line()).warnings).toBeUndefined();
    });

    it('passes other payloads through as parsed, an absent one as undefined', () => {
      const payload = { text: 'hello', list: [1, { two: 2 }] };
      expect(accepted(line({ type: 'io.output', payload })).event.payload).toEqual(payload);
      expect(accepted(line({ type: 'io.output', payload: 'text' })).event.payload).toBe('text');
      const withoutPayload = envelope({ type: 'agent.turn.end' });
      delete withoutPayload.payload;
      expect(accepted(JSON.stringify(withoutPayload)).event.payload).toBeUndefined();
    });
  });

  describe('with a real Nexus journal line', () => {
    /** A Go envelope: no parent_id, session_id, agent_id or depth; Go's own extra keys. */
    function nexus(fields: Record<string, unknown>): string {
      return JSON.stringify({
        seq: 12,
        ts: '2026-05-01T14:00:00.123456789+02:00',
        type: 'tool.invoke',
        event_id: EVENT_ID,
        source: 'nexus.agent.react',
        parent_seq: 11,
        side_effect: true,
        ...fields,
      });
    }

    it("reads a Go tool.invoke payload's field names", () => {
      const result = accepted(
        nexus({
          payload: {
            _schema_version: 1,
            ID: 'tc_1',
            Name: 'read_file',
            Arguments: { path: 'a.txt' },
            TurnID: '',
            ParentCallID: '',
            Sequence: 0,
          },
        }),
      );
      expect(result.event.payload).toEqual({
        id: 'tc_1',
        name: 'read_file',
        arguments: { path: 'a.txt' },
      });
      expect(result.event.timeUnixNano).toBe(NOON + 123_456_789n);
      expect(result.event.causation).toEqual({
        parentId: '',
        parentSeq: 11,
        sessionId: '',
        agentId: '',
        depth: 0,
        sequence: 12,
      });
    });

    it('keeps a Go turn and parent call id and makes nil arguments an empty object', () => {
      const result = accepted(
        nexus({
          payload: { ID: 'tc_2', Name: 'run', Arguments: null, TurnID: 't9', ParentCallID: 'tc_1' },
        }),
      );
      expect(result.event.payload).toEqual({
        id: 'tc_2',
        name: 'run',
        arguments: {},
        turnId: 't9',
        parentCallId: 'tc_1',
      });
    });

    it("reads a Go tool.result payload's field names", () => {
      const payload = {
        _schema_version: 1,
        ID: 'tc_1',
        Name: 'read_file',
        Output: 'hello',
        Error: '',
        OutputFile: '',
        OutputData: null,
        OutputStructured: null,
        TurnID: '',
      };
      expect(accepted(nexus({ type: 'tool.result', payload })).event.payload).toEqual({
        id: 'tc_1',
        name: 'read_file',
        output: 'hello',
      });
      const failed = {
        ...payload,
        Error: 'no such file',
        OutputStructured: { code: 2 },
        TurnID: 't',
      };
      expect(accepted(nexus({ type: 'tool.result', payload: failed })).event.payload).toEqual({
        id: 'tc_1',
        name: 'read_file',
        output: 'hello',
        error: 'no such file',
        outputStructured: { code: 2 },
        turnId: 't',
      });
    });

    it('leaves the id to the bus when event_id is missing, and says so', () => {
      const result = accepted(
        nexus({ event_id: undefined, payload: { ID: 'tc_1', Name: 'read_file' } }),
      );
      expect(result.hasEventId).toBe(false);
      expect(result.event.id).toBeUndefined();
      expect(new EventBus().emitEvent(result.event).id).toMatch(/^[0-9a-f]{32}$/);
    });

    it('treats an empty event_id like a missing one', () => {
      const result = accepted(line({ event_id: '' }));
      expect(result.hasEventId).toBe(false);
      expect(result.event.id).toBeUndefined();
    });

    it('sets causation fully, so the receiving bus adds nothing of its own', () => {
      const bus = new EventBus();
      bus.setDefaultCausation({ sessionId: 'sidecar', agentId: 'sidecar', depth: 9 });
      const init = accepted(nexus({ payload: { ID: 'tc_1', Name: 'x' } })).event;
      let inner: ReturnType<EventBus['emitEvent']> | undefined;
      bus.subscribe('outer', () => {
        inner = bus.withCausation({ sessionId: 'scope', agentId: 'scope', depth: 4 }, () =>
          bus.emitEvent(init),
        );
      });
      bus.emit('outer', null);
      expect(inner?.causation).toEqual({
        parentId: '',
        parentSeq: 11,
        sessionId: '',
        agentId: '',
        depth: 0,
        sequence: 12,
      });
    });
  });

  describe('normalising tool payloads', () => {
    it('reads our own camelCase ToolCall and drops empty optional ids', () => {
      const payload = { id: 'tc_1', name: 'x', arguments: { a: 1 }, turnId: '', parentCallId: '' };
      expect(accepted(line({ type: 'tool.invoke', payload })).event.payload).toEqual({
        id: 'tc_1',
        name: 'x',
        arguments: { a: 1 },
      });
    });

    it('keeps cancelled on a ToolResult', () => {
      const payload = { id: 'tc_1', name: 'x', output: '', error: 'aborted', cancelled: true };
      expect(accepted(line({ type: 'tool.result', payload })).event.payload).toEqual(payload);
    });

    it('keeps the description and span attributes of a call and the errorType of a result', () => {
      const invoke = {
        id: 'tc_1',
        name: 'x',
        arguments: {},
        description: 'Finds things',
        attributes: { 'mcp.method.name': 'tools/call' },
      };
      expect(accepted(line({ type: 'tool.invoke', payload: invoke })).event.payload).toEqual(
        invoke,
      );
      const result = {
        id: 'tc_1',
        name: 'x',
        output: '',
        error: 'no',
        errorType: 'tool_error',
        attributes: { 'jsonrpc.request.id': '3' },
      };
      expect(accepted(line({ type: 'tool.result', payload: result })).event.payload).toEqual(
        result,
      );
      const goResult = { ID: 'tc_1', Name: 'x', Output: '', Error: 'no', ErrorType: 'timeout' };
      expect(accepted(line({ type: 'tool.result', payload: goResult })).event.payload).toEqual({
        id: 'tc_1',
        name: 'x',
        output: '',
        error: 'no',
        errorType: 'timeout',
      });
    });

    it('drops span attributes that are not an object, naming the field, and keeps the result', () => {
      const payload = { id: 'tc_1', name: 'x', output: '', attributes: ['a'] };
      const decoded = accepted(line({ type: 'tool.result', payload }));
      expect(decoded.droppedFields!.map((dropped) => dropped.message)).toEqual([
        'payload.attributes must be an object, got an array',
      ]);
      expect(decoded.event.payload).toEqual({ id: 'tc_1', name: 'x', output: '' });
    });

    it('gives a missing output as an empty string', () => {
      const payload = { id: 'tc_1', name: 'x' };
      expect(accepted(line({ type: 'tool.result', payload })).event.payload).toEqual({
        id: 'tc_1',
        name: 'x',
        output: '',
      });
    });

    it('passes stream payloads through with progress and without optional keys', () => {
      const progress = { tool_name: 's', tool_id: 'tc', sequence: 2, progress: 0.5, payload: 1 };
      expect(
        accepted(line({ type: 'tool.stream.progress', payload: progress })).event.payload,
      ).toEqual(progress);
      const minimal = { tool_name: 's', tool_id: 'tc' };
      expect(accepted(line({ payload: minimal })).event.payload).toEqual(minimal);
    });
  });

  describe('normalising agent payloads', () => {
    it('maps a Nexus llm.response onto LlmResponse, dropping what tracing does not read', () => {
      const payload = {
        _schema_version: 1,
        RequestID: 'r1',
        Content: 'Reading the file.',
        ToolCalls: [{ ID: 'tc_1', Name: 'read_file', Arguments: '{"path":"a"}' }],
        Usage: { PromptTokens: 120, CompletionTokens: 30, TotalTokens: 150, CachedTokens: 0 },
        CostUSD: 0.002,
        Model: 'claude-sonnet',
        FinishReason: 'tool_use',
        Metadata: null,
        Citations: null,
      };
      expect(accepted(line({ type: 'llm.response', payload })).event.payload).toEqual({
        requestId: 'r1',
        content: 'Reading the file.',
        toolCalls: [{ id: 'tc_1', name: 'read_file' }],
        usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
        costUsd: 0.002,
        model: 'claude-sonnet',
        finishReason: 'tool_use',
      });
    });

    it('keeps the model and tool descriptions of an llm.request, not its messages', () => {
      const payload = {
        RequestID: 'r1',
        Role: 'reasoning',
        Messages: [{ Role: 'user', Content: 'a very long conversation' }],
        Tools: [{ Name: 'search', Description: 'Web search', Parameters: {} }],
        MaxTokens: 1024,
        Stream: true,
      };
      expect(accepted(line({ type: 'llm.request', payload })).event.payload).toEqual({
        requestId: 'r1',
        role: 'reasoning',
        tools: [{ name: 'search', description: 'Web search' }],
        maxTokens: 1024,
        stream: true,
      });
    });

    it('maps sub-agent and turn payloads, and leaves an absent payload absent', () => {
      const complete = { SpawnID: 'sp', Error: '', Iterations: 3, TokensUsed: { PromptTokens: 9 } };
      expect(
        accepted(line({ type: 'subagent.complete', payload: complete })).event.payload,
      ).toEqual({ spawnId: 'sp', error: '', iterations: 3, tokensUsed: { inputTokens: 9 } });
      const turn = JSON.parse(line({ type: 'agent.turn.start' })) as Record<string, unknown>;
      delete turn.payload;
      expect(accepted(JSON.stringify(turn)).event.payload).toBeUndefined();
      expect(
        accepted(line({ type: 'agent.turn.end', payload: { TurnID: 't1', Iteration: 2 } })).event
          .payload,
      ).toEqual({ turnId: 't1', iteration: 2 });
    });

    it('rejects a request id or spawn id of the wrong type, naming it: it pairs the event with its span', () => {
      const request = rejected(line({ type: 'llm.response', payload: { RequestID: 7 } }));
      expect(request).toMatchObject({ reason: 'wrong_type' });
      expect(request.message).toContain('payload.RequestID must be a string, got 7');
      const spawn = rejected(line({ type: 'subagent.complete', payload: { SpawnID: ['sp'] } }));
      expect(spawn.message).toContain('payload.SpawnID must be a string, got an array');
    });

    it('reads a number of tokens where a usage object belongs as the total, dropping nothing', () => {
      const complete = { SpawnID: 'sp', Iterations: 3, TokensUsed: 1832 };
      const decoded = accepted(line({ type: 'subagent.complete', payload: complete }));
      expect(decoded.event.payload).toEqual({
        spawnId: 'sp',
        iterations: 3,
        tokensUsed: { totalTokens: 1832 },
      });
      expect(decoded.droppedFields).toBeUndefined();
    });
  });

  describe('with a field of the wrong type that does not identify the event', () => {
    const cases: [string, string, string, unknown][] = [
      [
        'depth "x"',
        line({ depth: 'x' }),
        'depth must be a non-negative integer, got "x"',
        envelope().payload,
      ],
      [
        'an object source',
        line({ source: {} }),
        'source must be a string, got an object',
        envelope().payload,
      ],
      [
        'tool.invoke arguments as an array',
        line({ type: 'tool.invoke', payload: { id: 'a', name: 'b', arguments: [] } }),
        'payload.arguments must be an object, got an array',
        { id: 'a', name: 'b', arguments: {} },
      ],
      [
        'a numeric TurnID',
        line({ type: 'tool.invoke', payload: { ID: 'a', Name: 'b', TurnID: 3 } }),
        'payload.TurnID must be a string, got 3',
        { id: 'a', name: 'b', arguments: {} },
      ],
      [
        'a numeric Output',
        line({ type: 'tool.result', payload: { ID: 'a', Name: 'b', Output: 1 } }),
        'payload.Output must be a string, got 1',
        { id: 'a', name: 'b', output: '' },
      ],
      [
        'a string cancelled',
        line({ type: 'tool.result', payload: { id: 'a', name: 'b', cancelled: 'yes' } }),
        'payload.cancelled must be a boolean, got "yes"',
        { id: 'a', name: 'b', output: '' },
      ],
      [
        'a fractional stream sequence',
        line({ payload: { tool_name: 'x', tool_id: 'y', sequence: 1.5 } }),
        'payload.sequence must be an integer, got 1.5',
        { tool_name: 'x', tool_id: 'y' },
      ],
      [
        'a string progress',
        line({
          type: 'tool.stream.progress',
          payload: { tool_name: 'x', tool_id: 'y', progress: 'half' },
        }),
        'payload.progress must be a number, got "half"',
        { tool_name: 'x', tool_id: 'y' },
      ],
      [
        'a string token count',
        line({
          type: 'llm.response',
          payload: { Usage: { PromptTokens: 'many', CompletionTokens: 4 } },
        }),
        'payload.Usage.PromptTokens must be a non-negative integer, got "many"',
        { usage: { outputTokens: 4 } },
      ],
      [
        'a numeric tool call id in an answer',
        line({ type: 'llm.response', payload: { ToolCalls: [{ ID: 7, Name: 'search' }] } }),
        'payload.ToolCalls[0].ID must be a string, got 7',
        { toolCalls: [{ name: 'search' }] },
      ],
      [
        'a string payload of agent.turn.start',
        line({ type: 'agent.turn.start', payload: 'now' }),
        'payload must be an object, got "now"',
        undefined,
      ],
      [
        'a string iteration count',
        line({ type: 'subagent.complete', payload: { SpawnID: 'sp', Iterations: '3' } }),
        'payload.Iterations must be a finite number, got "3"',
        { spawnId: 'sp' },
      ],
    ];

    it.each(cases)(
      'accepts %s, leaving the field out and naming it',
      (_name, input, message, payload) => {
        const decoded = accepted(input);
        expect(decoded.droppedFields).toHaveLength(1);
        expect(decoded.droppedFields![0]!.message).toBe(message);
        expect(decoded.event.payload).toEqual(payload);
      },
    );

    it('labels a dropped field without list positions, so that it can be counted', () => {
      const calls = [{ ID: 'a' }, { ID: 7 }, 'x'];
      const decoded = accepted(line({ type: 'llm.response', payload: { ToolCalls: calls } }));
      expect(decoded.droppedFields!.map((dropped) => dropped.field)).toEqual([
        'payload.ToolCalls[].ID',
        'payload.ToolCalls[]',
      ]);
      expect(decoded.event.payload).toEqual({ toolCalls: [{ id: 'a' }, {}] });
    });

    it('keeps the envelope without a dropped depth or source', () => {
      const decoded = accepted(line({ depth: 'x', source: 5 }));
      expect(decoded.event.causation?.depth).toBe(0);
      expect(decoded.event.source).toBeUndefined();
      expect(decoded.droppedFields!.map((dropped) => dropped.field)).toEqual(['depth', 'source']);
    });

    it('still marks a result failed when its error is not a string', () => {
      const payload = { ID: 'a', Name: 'b', Error: { code: 'ENOENT' } };
      const decoded = accepted(line({ type: 'tool.result', payload }));
      expect(decoded.event.payload).toMatchObject({ error: '{"code":"ENOENT"}' });
    });
  });

  describe('with a bad line', () => {
    const deep = (levels: number): unknown => {
      let value: unknown = 1;
      for (let level = 0; level < levels; level += 1) value = { v: value };
      return value;
    };
    const cases: [string, string | Uint8Array, RejectReason, RegExp][] = [
      ['not JSON', '{"seq":1,', 'not_json', /not JSON/],
      ['whitespace only', '   ', 'not_json', /not JSON/],
      ['an array', '[1,2]', 'not_object', /JSON object, got an array/],
      ['a string', '"text"', 'not_object', /got "text"/],
      ['null', 'null', 'not_object', /got null/],
      ['a missing type', line({ type: undefined }), 'missing_field', /^type is missing/],
      [
        'a numeric type',
        line({ type: 5 }),
        'wrong_type',
        /^type must be a non-empty string, got 5/,
      ],
      ['an empty type', line({ type: '' }), 'wrong_type', /^type must be/],
      ['a missing ts', line({ ts: undefined }), 'missing_field', /^ts is missing/],
      ['a numeric ts', line({ ts: 1714564800 }), 'wrong_type', /^ts must be/],
      [
        'a bad ts',
        line({ ts: '2026-05-01 12:00' }),
        'bad_timestamp',
        /^ts must be an RFC 3339.*"2026-05-01 12:00"/,
      ],
      [
        'a negative seq',
        line({ seq: -1 }),
        'wrong_type',
        /^seq must be a non-negative integer, got -1/,
      ],
      ['a fractional parent_seq', line({ parent_seq: 1.5 }), 'wrong_type', /^parent_seq/],
      ['a numeric event_id', line({ event_id: 7 }), 'wrong_type', /^event_id must be a string/],
      ['a numeric parent_id', line({ parent_id: 1 }), 'wrong_type', /^parent_id/],
      ['a boolean session_id', line({ session_id: true }), 'wrong_type', /^session_id/],
      ['an array agent_id', line({ agent_id: [] }), 'wrong_type', /^agent_id/],
      [
        'a tool.invoke without payload',
        line({ type: 'tool.invoke', payload: undefined }),
        'missing_field',
        /^payload is missing/,
      ],
      [
        'a tool.invoke with a string payload',
        line({ type: 'tool.invoke', payload: 'x' }),
        'wrong_type',
        /^payload must be an object/,
      ],
      [
        'a tool.invoke without id',
        line({ type: 'tool.invoke', payload: { name: 'x' } }),
        'missing_field',
        /^payload\.id is missing/,
      ],
      [
        'a tool.invoke without name',
        line({ type: 'tool.invoke', payload: { ID: 'tc' } }),
        'missing_field',
        /^payload\.name is missing/,
      ],
      [
        'a tool.invoke with an empty ID',
        line({ type: 'tool.invoke', payload: { ID: '', Name: 'x' } }),
        'wrong_type',
        /^payload\.ID must be a non-empty string/,
      ],
      [
        'a tool.result without id',
        line({ type: 'tool.result', payload: { name: 'x' } }),
        'missing_field',
        /^payload\.id/,
      ],
      [
        'a stream event without tool_id',
        line({ payload: { tool_name: 'x' } }),
        'missing_field',
        /^payload\.tool_id is missing/,
      ],
      [
        '65 levels of nesting',
        JSON.stringify({ ...envelope(), payload: deep(64) }),
        'too_deep',
        /^payload(\.v)+: nesting deeper than 64/,
      ],
      [
        'a top-level __proto__',
        `{"__proto__":{"polluted":1},${line().slice(1)}`,
        'hostile_key',
        /^__proto__: key "__proto__" is not allowed/,
      ],
      [
        'a nested constructor',
        line({ type: 'x', payload: { list: [{ constructor: { prototype: { p: 1 } } }] } }),
        'hostile_key',
        /^payload\.list\[0\]\.constructor: key "constructor"/,
      ],
      [
        'a prototype key holding an array',
        line({ type: 'x', payload: { prototype: [1] } }),
        'hostile_key',
        /^payload\.prototype/,
      ],
      [
        'an escaped __proto__',
        line({ type: 'x', payload: {} }).replace(
          '"payload":{}',
          '"payload":{"\\u005f_proto__":{"polluted":1}}',
        ),
        'hostile_key',
        /__proto__/,
      ],
      [
        'an escaped lone surrogate',
        line({ type: 'x', payload: 'PLACEHOLDER' }).replace('PLACEHOLDER', '\\ud800'),
        'lone_surrogate',
        /^payload: string has an unpaired surrogate/,
      ],
      [
        'a lone surrogate in a key',
        line({ type: 'x', payload: {} }).replace('"payload":{}', '"payload":{"\\udc00":1}'),
        'lone_surrogate',
        /key has an unpaired surrogate/,
      ],
      [
        'a raw lone surrogate in text',
        line({ type: 'x', payload: 'PLACEHOLDER' }).replace('PLACEHOLDER', 'a\udc00b'),
        'lone_surrogate',
        /unpaired UTF-16 surrogate/,
      ],
      [
        'an invalid UTF-8 byte',
        Buffer.concat([Buffer.from(line().slice(0, -3)), Buffer.from([0xff]), Buffer.from('"}}')]),
        'invalid_utf8',
        /not valid UTF-8/,
      ],
      [
        'an overlong UTF-8 encoding',
        Buffer.from([0x22, 0xc0, 0xaf, 0x22]),
        'invalid_utf8',
        /UTF-8/,
      ],
      [
        'a UTF-8 encoded surrogate',
        Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]),
        'invalid_utf8',
        /UTF-8/,
      ],
      [
        'a truncated UTF-8 sequence',
        Buffer.from([0x22, 0xe2, 0x82, 0x22]),
        'invalid_utf8',
        /UTF-8/,
      ],
    ];

    it.each(cases)('rejects %s', (_name, input, reason, message) => {
      const result = rejected(input);
      expect(result.reason).toBe(reason);
      expect(result.message).toMatch(message);
      expect(REJECT_REASONS).toContain(result.reason);
    });

    it('accepts 64 levels of nesting and the limit is configurable', () => {
      expect(accepted(JSON.stringify({ ...envelope({ type: 'x' }), payload: deep(63) })).ok).toBe(
        true,
      );
      const result = rejected(JSON.stringify({ ...envelope({ type: 'x' }), payload: deep(10) }), {
        maxDepth: 8,
      });
      expect(result.reason).toBe('too_deep');
    });

    it('rejects a million levels of nesting without overflowing the stack', () => {
      const text = `{"type":"x","ts":"2026-05-01T12:00:00Z","payload":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
      expect(rejected(text, { maxLineBytes: 4 * 1024 * 1024 }).reason).toBe('too_deep');
    });

    it('accepts escaped surrogate pairs', () => {
      const text = line({ type: 'x', payload: 'PLACEHOLDER' }).replace(
        'PLACEHOLDER',
        '\\ud83d\\ude00',
      );
      expect(accepted(text).event.payload).toBe('😀');
    });

    it('accepts keys that merely contain a hostile word', () => {
      const payload = { __proto: 1, constructors: 2, my_prototype: 3, text: '__proto__' };
      expect(accepted(line({ type: 'x', payload })).event.payload).toEqual(payload);
    });

    it('accepts constructor and prototype keys with scalar values', () => {
      const payload = {
        id: 'tc',
        name: 'describe_class',
        arguments: { constructor: 'Foo', prototype: null },
      };
      expect(accepted(line({ type: 'tool.invoke', payload })).event.payload).toEqual(payload);
    });

    it('rejects __proto__ whatever its value', () => {
      const text = line({ type: 'x', payload: 0 }).replace(
        '"payload":0',
        '"payload":{"__proto__":1}',
      );
      expect(rejected(text).reason).toBe('hostile_key');
    });

    it('rejects a line over maxLineBytes as too_large, counting UTF-8 bytes', () => {
      const text = line({ type: 'x', payload: 'é'.repeat(600) });
      expect(accepted(text).ok).toBe(true);
      expect(rejected(text, { maxLineBytes: 1000 }).reason).toBe('too_large');
      expect(rejected(text, { maxLineBytes: 1000 }).message).toMatch(
        /over the limit of 1000 bytes/,
      );
      expect(rejected(Buffer.from(text), { maxLineBytes: 1000 }).reason).toBe('too_large');
    });

    it('rejects input that is neither text nor bytes', () => {
      expect(rejected(42 as unknown as string).reason).toBe('wrong_type');
    });

    it('keeps messages short for huge values', () => {
      const result = rejected(line({ type: 'x'.repeat(100), ts: 'y'.repeat(100_000) }));
      expect(result.message.length).toBeLessThan(200);
    });

    it('never lets a hostile key reach Object.prototype', () => {
      const lines = [
        '{"__proto__":{"polluted":"yes"},"type":"x","ts":"2026-05-01T12:00:00Z"}',
        '{"type":"x","ts":"2026-05-01T12:00:00Z","payload":{"constructor":{"prototype":{"polluted":"yes"}}}}',
      ];
      for (const text of lines) {
        const result = decodeEnvelope(text);
        expect(result.ok).toBe(false);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
});
