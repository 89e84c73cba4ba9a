import { context, propagation, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type BusEvent } from '../../src/bus/index.js';
import { traceToolCalls } from '../../src/otel/index.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { decodeEnvelope, formatRfc3339Nano } from '../../src/wire/index.js';
import {
  at,
  spanOfCall,
  startTracingHarness,
  type TracingHarness,
  type TracingHarnessOptions,
} from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  trace.disable();
  context.disable();
  propagation.disable();
});

async function start(options: TracingHarnessOptions = {}): Promise<EventBus> {
  harness = await startTracingHarness({ encoding: 'json', ...options });
  return harness.bus;
}

/** Emits at `ms` after T0 with the given causation parent (library mode: events have ids). */
function emit(
  bus: EventBus,
  type: string,
  payload: unknown,
  ms: number,
  parent?: BusEvent,
  causation: { sessionId?: string; agentId?: string; depth?: number } = {},
): BusEvent {
  return bus.emit(type, payload, {
    timeUnixNano: at(ms),
    causation: { parentId: parent?.id ?? '', sessionId: 's1', agentId: 'planner', ...causation },
  });
}

/**
 * Emits what a journal line decodes to, the sidecar's path onto the bus: the payload as the line
 * spells it (the Go original's field names, say), no event id, and no causation but the session
 * and agent.
 */
function journalLine(
  bus: EventBus,
  type: string,
  payload: unknown,
  ms: number,
  causation: { sessionId?: string; agentId?: string } = {},
): void {
  const line = JSON.stringify({
    ts: formatRfc3339Nano(at(ms)),
    type,
    session_id: causation.sessionId,
    agent_id: causation.agentId,
    payload,
  });
  const decoded = decodeEnvelope(line);
  if (!decoded.ok) throw new Error(`${type}: ${decoded.message}`);
  bus.emitEvent(decoded.event);
}

function named(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`expected one span ${name}, got ${found.length}`);
  return found[0]!;
}

async function allSpans(count: number): Promise<ReceivedSpan[]> {
  await harness!.tracing.shutdown();
  return harness!.spans(count);
}

describe('traceToolCalls() agent spans', () => {
  it('draws turn → chat and turn → execute_tool, linking the tool to the chat that asked for it', async () => {
    const bus = await start();
    const turn = emit(bus, 'agent.turn.start', { turnId: 't1', iteration: 1 }, 0);
    const request = emit(
      bus,
      'llm.request',
      { requestId: 'r1', model: 'gpt-4o', tools: [{ name: 'search', description: 'Web search' }] },
      1,
      turn,
    );
    const response = emit(
      bus,
      'llm.response',
      {
        requestId: 'r1',
        model: 'gpt-4o-2024-08-06',
        usage: { inputTokens: 120, outputTokens: 30 },
        finishReason: 'tool_calls',
        costUsd: 0.002,
        toolCalls: [{ id: 'tc_1', name: 'search', arguments: '{}' }],
      },
      40,
      request,
    );
    const invoke = emit(
      bus,
      'tool.invoke',
      { id: 'tc_1', name: 'search', arguments: {} },
      41,
      response,
    );
    emit(bus, 'tool.result', { id: 'tc_1', name: 'search', output: 'ok' }, 90, invoke);
    emit(bus, 'agent.turn.end', { turnId: 't1' }, 100, turn);

    const spans = await allSpans(3);
    const turnSpan = named(spans, 'invoke_agent planner');
    const chat = named(spans, 'chat gpt-4o');
    const tool = spanOfCall(spans, 'tc_1');
    expect(turnSpan.parentSpanId).toBe('');
    expect(turnSpan.startTimeUnixNano).toBe(at(0));
    expect(turnSpan.endTimeUnixNano).toBe(at(100));
    expect(turnSpan.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'planner',
      'gen_ai.conversation.id': 's1',
      'tooltrace.turn.id': 't1',
      'tooltrace.turn.iteration': 1,
      'tooltrace.end_reason': 'result',
    });
    expect(chat.parentSpanId).toBe(turnSpan.spanId);
    expect(chat.startTimeUnixNano).toBe(at(1));
    expect(chat.endTimeUnixNano).toBe(at(40));
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'tooltrace.llm.cost_usd': 0.002,
      'gen_ai.agent.name': 'planner',
    });
    // The tool is the chat's sibling under the turn, linked to the chat whose answer asked for it.
    expect(tool.parentSpanId).toBe(turnSpan.spanId);
    expect(tool.traceId).toBe(turnSpan.traceId);
    expect(tool.links).toEqual([
      expect.objectContaining({ traceId: chat.traceId, spanId: chat.spanId }),
    ]);
    expect(tool.attributes['gen_ai.tool.description']).toBe('Web search');
  });

  it('infers the start of a chat span from the previous event of its turn when only llm.response comes', async () => {
    const bus = await start();
    // A Nexus journal: no causation at all, only llm.response, tool calls with Go field names.
    const plain = (type: string, payload: unknown, ms: number): void =>
      journalLine(bus, type, payload, ms, { sessionId: 's1', agentId: 'a' });
    plain('agent.turn.start', {}, 0);
    plain(
      'llm.response',
      {
        Model: 'mock',
        Usage: { PromptTokens: 10, CompletionTokens: 5 },
        ToolCalls: [{ ID: 'tc_1' }],
      },
      30,
    );
    plain('tool.invoke', { ID: 'tc_1', Name: 'read_file', Arguments: {} }, 31);
    plain('tool.result', { ID: 'tc_1', Name: 'read_file', Output: 'text' }, 50);
    plain('llm.response', { Model: 'mock', FinishReason: 'end_turn' }, 80);
    plain('agent.turn.end', {}, 90);

    const spans = await allSpans(4);
    const turn = named(spans, 'invoke_agent a');
    const chats = spans.filter((span) => span.name === 'chat mock');
    expect(chats).toHaveLength(2);
    expect(chats.map((chat) => chat.parentSpanId)).toEqual([turn.spanId, turn.spanId]);
    // First answer: starts where the turn started; second: where the tool call ended.
    expect(chats.map((chat) => chat.startTimeUnixNano)).toEqual([at(0), at(50)]);
    expect(chats.map((chat) => chat.endTimeUnixNano)).toEqual([at(30), at(80)]);
    expect(chats[0]!.attributes).toMatchObject({
      'tooltrace.start_inferred': true,
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 5,
    });
    const tool = spanOfCall(spans, 'tc_1');
    expect(tool.parentSpanId).toBe(turn.spanId);
    expect(tool.links[0]?.spanId).toBe(chats[0]!.spanId);
    expect(harness!.tracing.stats().agent.inferredStarts).toBe(2);
  });

  it('counts streamed chunks, time to first chunk, and ends the chat at llm.stream.end without a second span for llm.response', async () => {
    const bus = await start();
    const turn = emit(bus, 'agent.turn.start', { turnId: 't1' }, 0);
    const request = emit(
      bus,
      'llm.request',
      { requestId: 'r1', model: 'm', stream: true },
      10,
      turn,
    );
    for (let index = 0; index < 50; index += 1) {
      emit(bus, 'llm.stream.chunk', { requestId: 'r1', index, content: 'x' }, 260 + index, request);
    }
    emit(bus, 'llm.stream.end', { requestId: 'r1', finishReason: 'stop' }, 400, request);
    emit(bus, 'llm.response', { requestId: 'r1', model: 'm' }, 401, request);
    emit(bus, 'agent.turn.end', { turnId: 't1' }, 500, turn);

    const spans = await allSpans(2);
    expect(spans.filter((span) => span.name === 'chat m')).toHaveLength(1);
    const chat = named(spans, 'chat m');
    expect(chat.endTimeUnixNano).toBe(at(400));
    expect(chat.events).toEqual([]);
    expect(chat.attributes['tooltrace.llm.stream.chunks']).toBe(50);
    expect(chat.attributes['gen_ai.response.time_to_first_chunk']).toBeCloseTo(0.25, 9);
    expect(chat.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    expect(harness!.tracing.stats().agent.responsesAfterStreamEnd).toBe(1);
  });

  it('ends a chat with status ERROR on llm.error, error.type from the payload else _OTHER', async () => {
    const bus = await start();
    const turn = emit(bus, 'agent.turn.start', {}, 0);
    const first = emit(bus, 'llm.request', { requestId: 'r1', model: 'm' }, 1, turn);
    emit(
      bus,
      'llm.error',
      { requestId: 'r1', error: 'rate limited', errorType: 'rate_limit' },
      5,
      first,
    );
    const second = emit(bus, 'llm.request', { requestId: 'r2', model: 'm' }, 6, turn);
    emit(bus, 'llm.error', { requestId: 'r2', error: 'boom' }, 9, second);
    emit(bus, 'agent.turn.end', {}, 10, turn);

    const spans = await allSpans(3);
    const chats = spans.filter((span) => span.name === 'chat m');
    expect(chats.map((chat) => chat.status)).toEqual([
      { code: 2, message: 'rate limited' },
      { code: 2, message: 'boom' },
    ]);
    expect(chats.map((chat) => chat.attributes['error.type'])).toEqual(['rate_limit', '_OTHER']);
  });

  it('nests a sub-agent under the tool that spawned it, with its own turn, chat and tool inside', async () => {
    const bus = await start();
    const turn = emit(bus, 'agent.turn.start', { turnId: 't1' }, 0);
    const research = emit(
      bus,
      'tool.invoke',
      { id: 'tc_r', name: 'research', arguments: {} },
      1,
      turn,
    );
    const spawn = emit(
      bus,
      'subagent.spawn',
      { spawnId: 'sp1', task: 'summarize the findings', parentTurnId: 't1' },
      2,
      research,
    );
    const inner = { agentId: 'summarizer', depth: 1 };
    const innerTurn = emit(bus, 'agent.turn.start', { turnId: 'st1' }, 3, spawn, inner);
    const chat = emit(bus, 'llm.request', { model: 'small' }, 4, innerTurn, inner);
    const answer = emit(bus, 'llm.response', { model: 'small' }, 5, chat, inner);
    const call = emit(
      bus,
      'tool.invoke',
      { id: 'tc_s', name: 'summarize', arguments: {} },
      6,
      answer,
      inner,
    );
    emit(bus, 'tool.result', { id: 'tc_s', name: 'summarize', output: 'short' }, 7, call, inner);
    emit(bus, 'subagent.iteration', { spawnId: 'sp1', iteration: 1 }, 8, innerTurn, inner);
    emit(bus, 'agent.turn.end', { turnId: 'st1' }, 9, innerTurn, inner);
    emit(
      bus,
      'subagent.complete',
      { spawnId: 'sp1', iterations: 1, tokensUsed: { inputTokens: 7, outputTokens: 3 } },
      10,
      spawn,
    );
    emit(bus, 'tool.result', { id: 'tc_r', name: 'research', output: 'done' }, 11, research);
    emit(bus, 'agent.turn.end', { turnId: 't1' }, 12, turn);

    const spans = await allSpans(6);
    const outerTurn = named(spans, 'invoke_agent planner');
    const researchSpan = spanOfCall(spans, 'tc_r');
    const subagent = named(spans, 'invoke_agent summarize the findings');
    const innerTurnSpan = named(spans, 'invoke_agent summarizer');
    const innerChat = named(spans, 'chat small');
    const summarize = spanOfCall(spans, 'tc_s');
    expect(researchSpan.parentSpanId).toBe(outerTurn.spanId);
    expect(subagent.parentSpanId).toBe(researchSpan.spanId);
    expect(innerTurnSpan.parentSpanId).toBe(subagent.spanId);
    expect(innerChat.parentSpanId).toBe(innerTurnSpan.spanId);
    expect(summarize.parentSpanId).toBe(innerTurnSpan.spanId);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(subagent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'tooltrace.subagent.spawn_id': 'sp1',
      'tooltrace.subagent.iterations': 1,
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.output_tokens': 3,
    });
    expect(subagent.events.map((event) => event.name)).toEqual(['subagent.iteration']);
  });

  it('nests a sub-agent by its ParentTurnID when no causation links it', async () => {
    const bus = await start();
    const plain = (type: string, payload: unknown, ms: number, agentId = 'main'): void =>
      journalLine(bus, type, payload, ms, { sessionId: 's1', agentId });
    plain('agent.turn.start', { TurnID: 't1' }, 0);
    plain('subagent.spawn', { SpawnID: 'sp', Task: 'dig', ParentTurnID: 't1' }, 1);
    plain('llm.response', { Model: 'm' }, 2, 'helper');
    plain('subagent.complete', { SpawnID: 'sp', Error: 'gave up' }, 3);
    plain('agent.turn.end', { TurnID: 't1' }, 4);

    const spans = await allSpans(3);
    const turn = named(spans, 'invoke_agent main');
    const subagent = named(spans, 'invoke_agent dig');
    expect(subagent.parentSpanId).toBe(turn.spanId);
    // The helper's events belong to the sub-agent running when they came.
    expect(named(spans, 'chat m').parentSpanId).toBe(subagent.spanId);
    expect(subagent.status).toEqual({ code: 2, message: 'gave up' });
    expect(subagent.attributes['error.type']).toBe('_OTHER');
  });

  it('puts other events on the innermost open span, holds ones that come before the turn, and leaves out excludeEvents', async () => {
    const bus = await start({ tracing: { excludeEvents: ['io.output', 'llm.stream.*'] } });
    const input = emit(bus, 'io.input', { content: 'hi' }, 0);
    const turn = emit(bus, 'agent.turn.start', {}, 1, input);
    emit(bus, 'plan.created', { steps: 2 }, 2, turn);
    const invoke = emit(bus, 'tool.invoke', { id: 'tc_1', name: 'edit', arguments: {} }, 3, turn);
    emit(bus, 'plan.step.done', {}, 4, invoke);
    emit(bus, 'tool.result', { id: 'tc_1', name: 'edit', output: 'ok' }, 5, invoke);
    emit(bus, 'io.output', { content: 'bye' }, 6, turn);
    emit(bus, 'llm.stream.chunk', { content: 'x' }, 6, turn);
    emit(bus, 'agent.turn.end', {}, 7, turn);

    const spans = await allSpans(2);
    const turnSpan = named(spans, 'invoke_agent planner');
    expect(turnSpan.events.map((event) => [event.name, event.timeUnixNano])).toEqual([
      ['io.input', at(0)],
      ['plan.created', at(2)],
    ]);
    expect(turnSpan.attributes['tooltrace.events.recorded']).toBe(2);
    expect(spanOfCall(spans, 'tc_1').events.map((event) => event.name)).toEqual(['plan.step.done']);
  });

  it('keeps at most maxStreamEvents other events per span and counts the rest', async () => {
    const bus = await start({ tracing: { maxStreamEvents: 3 } });
    const turn = emit(bus, 'agent.turn.start', {}, 0);
    for (let index = 0; index < 10; index += 1)
      emit(bus, 'plan.update', { index }, 1 + index, turn);
    emit(bus, 'agent.turn.end', {}, 20, turn);
    const [span] = await allSpans(1);
    expect(span!.events).toHaveLength(3);
    expect(span!.attributes['tooltrace.events.recorded']).toBe(3);
    expect(span!.attributes['tooltrace.events.coalesced']).toBe(7);
  });

  it('gives two sessions that reuse tc_1 a span each, in two traces', async () => {
    const bus = await start();
    for (const sessionId of ['a', 'b']) {
      const plain = (type: string, payload: unknown, ms: number): void =>
        journalLine(bus, type, payload, ms, { sessionId });
      plain('agent.turn.start', {}, 0);
      plain('tool.invoke', { ID: 'tc_1', Name: 'ls' }, 1);
      plain('tool.result', { ID: 'tc_1', Name: 'ls', Output: '' }, 2);
      plain('agent.turn.end', {}, 3);
    }
    const spans = await allSpans(4);
    const tools = spans.filter((span) => span.name === 'execute_tool ls');
    expect(tools).toHaveLength(2);
    expect(tools.map((span) => span.attributes['gen_ai.conversation.id'])).toEqual(['a', 'b']);
    expect(new Set(tools.map((span) => span.traceId)).size).toBe(2);
  });

  it('takes a call id used again in the same session after its result as a new call, and counts it', async () => {
    const bus = await start({ tracing: { stableEventId: () => '' } });
    const plain = (type: string, payload: unknown, ms: number): void =>
      journalLine(bus, type, payload, ms, { sessionId: 's1' });
    plain('tool.invoke', { ID: 'tc_1', Name: 'ls' }, 1);
    plain('tool.result', { ID: 'tc_1', Name: 'ls', Output: 'first' }, 2);
    plain('tool.invoke', { ID: 'tc_1', Name: 'ls' }, 1); // the same line again: a duplicate
    plain('tool.invoke', { ID: 'tc_1', Name: 'ls' }, 3);
    plain('tool.result', { ID: 'tc_1', Name: 'ls', Output: 'second' }, 4);

    const spans = await allSpans(2);
    expect(spans.filter((span) => span.name === 'execute_tool ls')).toHaveLength(2);
    const stats = harness!.tracing.stats();
    expect(stats.reusedCallIds).toBe(1);
    expect(stats.duplicateEvents).toBe(1);
  });

  it("draws one trace per session under a root span with traceBy: 'session'", async () => {
    const bus = await start({ tracing: { traceBy: 'session' } });
    emit(bus, 'io.session.start', { sessionId: 's1' }, 0);
    for (const offset of [10, 20]) {
      const turn = emit(bus, 'agent.turn.start', {}, offset);
      emit(bus, 'agent.turn.end', {}, offset + 5, turn);
    }
    emit(bus, 'io.session.end', { sessionId: 's1' }, 30);
    const spans = await allSpans(3);
    const root = named(spans, 'session s1');
    const turns = spans.filter((span) => span.name === 'invoke_agent planner');
    expect(root.parentSpanId).toBe('');
    expect(root.startTimeUnixNano).toBe(at(0));
    expect(root.endTimeUnixNano).toBe(at(30));
    expect(turns.map((turn) => turn.parentSpanId)).toEqual([root.spanId, root.spanId]);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
  });

  it('takes the session of io.session.start for events that carry none, and the agentName option', async () => {
    const bus = await start({ tracing: { agentName: 'coder' } });
    const plain = (type: string, payload: unknown, ms: number): void =>
      journalLine(bus, type, payload, ms);
    plain('io.session.start', { session_id: 'abc' }, 0);
    plain('agent.turn.start', {}, 1);
    plain('llm.response', { Model: 'm' }, 2);
    plain('tool.invoke', { id: 'tc_1', name: 'ls', arguments: {} }, 3);
    plain('tool.result', { id: 'tc_1', name: 'ls', output: '' }, 4);
    plain('agent.turn.end', {}, 5);
    const spans = await allSpans(3);
    expect(spans.map((span) => span.name).sort()).toEqual([
      'chat m',
      'execute_tool ls',
      'invoke_agent coder',
    ]);
    for (const span of spans) {
      expect(span.attributes['gen_ai.conversation.id']).toBe('abc');
      expect(span.attributes['gen_ai.agent.name']).toBe('coder');
    }
  });

  it('ends a turn that never ends at shutdown, marked, after its open tool call', async () => {
    const bus = await start();
    const turn = emit(bus, 'agent.turn.start', {}, 0);
    emit(bus, 'tool.invoke', { id: 'tc_1', name: 'slow', arguments: {} }, 5, turn);
    const spans = await allSpans(2);
    const turnSpan = named(spans, 'invoke_agent planner');
    expect(turnSpan.attributes['tooltrace.end_reason']).toBe('shutdown');
    expect(spanOfCall(spans, 'tc_1').attributes['tooltrace.end_reason']).toBe('shutdown');
    expect(turnSpan.endTimeUnixNano).toBe(at(5));
    expect(harness!.tracing.stats().agent.spansEnded.shutdown).toBe(1);
  });
});

describe('traceToolCalls() agent memory', () => {
  it('remembers at most maxOpenSpans sessions that have nothing open, counting what they held', async () => {
    const bus = await start({ tracing: { maxOpenSpans: 4 } });
    for (let index = 0; index < 20; index += 1) {
      emit(bus, 'plan.update', { index }, index, undefined, { sessionId: `s${index}` });
    }
    // Sixteen sessions were forgotten, each with the one event it was holding for a turn.
    expect(harness!.tracing.stats().agent.busEventsUnattached).toBe(16);
    await harness!.tracing.shutdown();
    expect(harness!.tracing.stats().agent.busEventsUnattached).toBe(20);
  });
});

describe('traceToolCalls() excludeEvents option', () => {
  it('refuses a pattern with a * anywhere but at the end, or an empty one, naming its index', () => {
    expect(() =>
      traceToolCalls(new EventBus(), { excludeEvents: ['plan.*', 'llm.*.end'] }),
    ).toThrow(
      /options\.excludeEvents\[1\] must be an event type or a prefix ending in \*, got "llm\.\*\.end"/,
    );
    expect(() => traceToolCalls(new EventBus(), { excludeEvents: [''] })).toThrow(
      /options\.excludeEvents\[0\]/,
    );
  });
});
