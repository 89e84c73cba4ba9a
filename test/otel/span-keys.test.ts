import { context, propagation, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventBus, type EventInit } from '../../src/bus/index.js';
import { DerivedIdGenerator, traceReplay, type TraceBy } from '../../src/otel/index.js';
import { decodeEnvelope, formatRfc3339Nano } from '../../src/wire/index.js';
import { at } from './tracing-harness.js';

/*
 * The golden ids. Span and trace ids are hashed from identity keys (`span-keys.ts`), and a
 * sidecar that restarts and replays its journal must export the very same ids, or every span
 * sent before the restart turns into a duplicate with another id. A change to a key format is
 * therefore a change users see after an upgrade: it must fail here, be reviewed, and be said in
 * the CHANGELOG. The ids below were recorded from the code and are never to be "fixed" to make
 * a refactoring pass.
 */

const ID = (n: number): string => n.toString(16).padStart(32, '0');

/**
 * One session of an agent: a turn, a model call that asks for a tool, the tool (streaming, with
 * a nested call), a sub-agent, a second model call whose request never came (inferred start),
 * the turn's end. Times are fixed; ids are fixed or (for the journal without ids) absent.
 */
function journal(withIds: boolean): EventInit[] {
  const session = { sessionId: 's1', agentId: 'planner', depth: 0 };
  const line = (
    n: number,
    type: string,
    payload: unknown,
    parent: number,
    causation: object = {},
  ): EventInit => ({
    type,
    payload,
    timeUnixNano: at(n),
    ...(withIds ? { id: ID(n) } : {}),
    causation: { ...session, parentId: withIds && parent > 0 ? ID(parent) : '', ...causation },
  });
  return [
    line(1, 'io.session.start', { sessionId: 's1' }, 0),
    line(2, 'agent.turn.start', { turnId: 't1', iteration: 1 }, 1),
    line(3, 'llm.request', { requestId: 'r1', turnId: 't1', model: 'm' }, 2),
    line(4, 'llm.response', { requestId: 'r1', model: 'm', toolCalls: [{ id: 'tc_a' }] }, 3),
    line(5, 'tool.invoke', { id: 'tc_a', name: 'outer', arguments: {}, turnId: 't1' }, 4),
    line(6, 'tool.invoke', { id: 'tc_b', name: 'inner', arguments: {} }, 5),
    line(
      7,
      'tool.stream.partial',
      { tool_name: 'inner', tool_id: 'tc_b', turn_id: '', sequence: 1, payload: 'x' },
      6,
    ),
    line(8, 'tool.result', { id: 'tc_b', name: 'inner', output: 'x' }, 6),
    line(9, 'tool.result', { id: 'tc_a', name: 'outer', output: 'x' }, 5),
    line(10, 'subagent.spawn', { spawnId: 'sp1', name: 'helper', parentTurnId: 't1' }, 9),
    line(11, 'subagent.complete', { spawnId: 'sp1', iterations: 1 }, 10),
    line(12, 'llm.response', { turnId: 't1', model: 'm' }, 11),
    line(13, 'agent.turn.end', { turnId: 't1' }, 12),
    line(14, 'io.session.end', { sessionId: 's1' }, 13),
  ];
}

/** Go's names for the payload keys of {@link journal}, and Nexus's for the session. */
const GO_KEYS: Record<string, string> = {
  id: 'ID',
  name: 'Name',
  arguments: 'Arguments',
  output: 'Output',
  turnId: 'TurnID',
  iteration: 'Iteration',
  requestId: 'RequestID',
  model: 'Model',
  toolCalls: 'ToolCalls',
  spawnId: 'SpawnID',
  parentTurnId: 'ParentTurnID',
  iterations: 'Iterations',
  sessionId: 'session_id',
};

function goSpelled(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(goSpelled);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [GO_KEYS[key] ?? key, goSpelled(inner)]),
  );
}

/**
 * The journal as lines a Nexus process writes (Go's payload keys; stream payloads are the same
 * in every spelling), decoded as the sidecar decodes them.
 */
function decodedGoJournal(withIds: boolean): EventInit[] {
  return journal(withIds).map((event) => {
    const causation = event.causation!;
    const line = JSON.stringify({
      ts: formatRfc3339Nano(event.timeUnixNano!),
      type: event.type,
      event_id: event.id,
      parent_id: causation.parentId,
      session_id: causation.sessionId,
      agent_id: causation.agentId,
      depth: causation.depth,
      payload: event.type.startsWith('tool.stream.') ? event.payload : goSpelled(event.payload),
    });
    const decoded = decodeEnvelope(line);
    if (!decoded.ok) throw new Error(`${event.type}: ${decoded.message}`);
    return decoded.event;
  });
}

interface SpanIds {
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

afterEach(() => {
  vi.useRealTimers();
  trace.disable();
  context.disable();
  propagation.disable();
});

/**
 * Replays `events` into a fresh provider with derived ids; the ids of every span, by name.
 * `resumable`: a later run resumes the replay, so what is open at shutdown is cut.
 */
async function idsOf(
  events: EventInit[],
  traceBy: TraceBy,
  withIds: boolean,
  resumable = false,
): Promise<Record<string, SpanIds>> {
  const exporter = new InMemorySpanExporter();
  const idGenerator = new DerivedIdGenerator();
  const provider = new BasicTracerProvider({
    idGenerator,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const bus = new EventBus();
  const tracing = traceReplay(bus, {
    tracerProvider: provider,
    idGenerator,
    traceBy,
    liveUpdates: { enabled: true, intervalMs: 1000 },
    resumable,
    ...(withIds ? {} : { stableEventId: () => '' }),
  });
  for (const event of events) {
    bus.emitEvent(event);
    // The outer call stays open long enough for one in-flight snapshot.
    if (event.type === 'tool.stream.partial') vi.advanceTimersByTime(1500);
  }
  await tracing.shutdown();
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  const ids: Record<string, SpanIds> = {};
  for (const span of spans) {
    let name = span.name;
    for (let n = 2; name in ids; n += 1) name = `${span.name} #${n}`;
    ids[name] = {
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      parentSpanId: span.parentSpanContext?.spanId ?? '',
    };
  }
  return ids;
}

/**
 * The recorded ids: each span's parent span id and span id, replaying the journal with event
 * ids (any `traceBy`: it only changes trace ids) and without them (`traceBy: 'session'`, which
 * adds a session root).
 */
const RECORDED: Record<string, { withIds?: [string, string]; withoutIds: [string, string] }> = {
  'session s1': { withoutIds: ['', '361ae0a1e5892c55'] },
  'invoke_agent planner': {
    withIds: ['', '322c72fc7cadc1b9'],
    withoutIds: ['361ae0a1e5892c55', '10d40415cfef9474'],
  },
  'chat m': {
    withIds: ['322c72fc7cadc1b9', 'ea2fe1bc1bf6f162'],
    withoutIds: ['10d40415cfef9474', 'eb9ffd54c3e13a03'],
  },
  'execute_tool outer': {
    withIds: ['322c72fc7cadc1b9', '2e050f9537d09730'],
    withoutIds: ['10d40415cfef9474', '9f17e8b55c6417c3'],
  },
  'execute_tool outer (in flight)': {
    withIds: ['2e050f9537d09730', 'aef28d637e078e38'],
    withoutIds: ['9f17e8b55c6417c3', '46a2cf8d8a56622f'],
  },
  'execute_tool inner': {
    withIds: ['2e050f9537d09730', 'a08f38eeb14fbab9'],
    withoutIds: ['10d40415cfef9474', '24ea79a40f81432c'],
  },
  'execute_tool inner (in flight)': {
    withIds: ['a08f38eeb14fbab9', 'bab3ab424cd49614'],
    withoutIds: ['24ea79a40f81432c', 'c66b3aabb31b5120'],
  },
  'invoke_agent helper': {
    withIds: ['322c72fc7cadc1b9', 'a836e5d5301c3449'],
    withoutIds: ['10d40415cfef9474', 'fc12969d9908a9be'],
  },
  'chat m #2': {
    withIds: ['322c72fc7cadc1b9', '597ea494fc36b39d'],
    withoutIds: ['10d40415cfef9474', '4c2b13720a48f302'],
  },
};

/** The recorded ids of every span of one replay, all in the trace `traceId`. */
function recorded(withIds: boolean, traceId: string): Record<string, SpanIds> {
  const ids: Record<string, SpanIds> = {};
  for (const [name, replays] of Object.entries(RECORDED)) {
    const pair = withIds ? replays.withIds : replays.withoutIds;
    if (pair !== undefined) ids[name] = { traceId, parentSpanId: pair[0], spanId: pair[1] };
  }
  return ids;
}

describe('span keys', () => {
  it.each([
    { traceBy: 'causal-root', withIds: true, traceId: '815d0a12428ae0669abc823a614cf0f8' },
    { traceBy: 'call', withIds: true, traceId: '38adc668aeedefe711d8f89878385153' },
    { traceBy: 'session', withIds: false, traceId: '144ef30df0e7074c35c7356f98bf7ba6' },
  ] as const)(
    'derives the recorded ids (traceBy $traceBy, event ids: $withIds)',
    async ({ traceBy, withIds, traceId }) => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      expect(await idsOf(journal(withIds), traceBy, withIds)).toEqual(recorded(withIds, traceId));
    },
  );

  it.each([
    { traceBy: 'causal-root', withIds: true, traceId: '815d0a12428ae0669abc823a614cf0f8' },
    { traceBy: 'session', withIds: false, traceId: '144ef30df0e7074c35c7356f98bf7ba6' },
  ] as const)(
    'derives the same ids from the journal in Go spelling, decoded (event ids: $withIds)',
    async ({ traceBy, withIds, traceId }) => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      const ids = await idsOf(decodedGoJournal(withIds), traceBy, withIds);
      expect(ids).toEqual(recorded(withIds, traceId));
    },
  );
});

/**
 * The recorded ids of a replay cut by shutdown after the inner call's partial (with event ids,
 * `traceBy: 'causal-root'`): what was still open goes out as snapshots, children of the span
 * ids kept for the real ends; the chat had ended and keeps its own span.
 */
const RECORDED_CUT: Record<string, [string, string]> = {
  'chat m': ['322c72fc7cadc1b9', 'ea2fe1bc1bf6f162'],
  'execute_tool outer (in flight)': ['2e050f9537d09730', 'aef28d637e078e38'],
  'execute_tool outer (in flight) #2': ['2e050f9537d09730', '90670d81af5d453d'],
  'execute_tool inner (in flight)': ['a08f38eeb14fbab9', 'bab3ab424cd49614'],
  'execute_tool inner (in flight) #2': ['a08f38eeb14fbab9', '5dc626e16df6aecd'],
  'invoke_agent planner (in flight)': ['322c72fc7cadc1b9', '1fd3e4c1473e5095'],
};

describe('span keys of a resumable replay cut by shutdown', () => {
  it('derives the recorded ids of the snapshots in place of the open spans', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const ids = await idsOf(journal(true).slice(0, 7), 'causal-root', true, true);
    const expected: Record<string, SpanIds> = {};
    for (const [name, [parentSpanId, spanId]] of Object.entries(RECORDED_CUT)) {
      expected[name] = { traceId: '815d0a12428ae0669abc823a614cf0f8', parentSpanId, spanId };
    }
    expect(ids).toEqual(expected);
  });
});
