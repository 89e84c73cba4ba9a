import { describe, expect, it } from 'vitest';
import type { EventInit } from '../../src/bus/index.js';
import { DerivedIdGenerator } from '../../src/otel/index.js';
import { startOtlpReceiver, type ReceivedSpan } from '../../src/testing/index.js';
import { at, spanOfCall, startTracingHarness } from './tracing-harness.js';

const ID = (n: number): string => n.toString(16).padStart(32, '0');

/** A journal: a root event, a call with a nested call and a stream, as a sidecar replays it. */
const JOURNAL: EventInit[] = [
  { type: 'user.input', id: ID(1), payload: {}, timeUnixNano: at(0) },
  {
    type: 'tool.invoke',
    id: ID(2),
    payload: { id: 'tc_a', name: 'outer', arguments: {} },
    timeUnixNano: at(1),
    causation: { parentId: ID(1), sessionId: 's1' },
  },
  {
    type: 'tool.invoke',
    id: ID(3),
    payload: { id: 'tc_b', name: 'inner', arguments: {} },
    timeUnixNano: at(2),
    causation: { parentId: ID(2), sessionId: 's1' },
  },
  {
    type: 'tool.stream.partial',
    id: ID(4),
    payload: { tool_name: 'inner', tool_id: 'tc_b', turn_id: '', sequence: 1, payload: 'x' },
    timeUnixNano: at(3),
    causation: { parentId: ID(3), sessionId: 's1' },
  },
  {
    type: 'tool.result',
    id: ID(5),
    payload: { id: 'tc_b', name: 'inner', output: 'x' },
    timeUnixNano: at(4),
    causation: { parentId: ID(3), sessionId: 's1' },
  },
  {
    type: 'tool.result',
    id: ID(6),
    payload: { id: 'tc_a', name: 'outer', output: 'x' },
    timeUnixNano: at(5),
    causation: { parentId: ID(2), sessionId: 's1' },
  },
];

type Ids = Pick<ReceivedSpan, 'traceId' | 'spanId' | 'parentSpanId'>;

function idsOf(span: ReceivedSpan): Ids {
  return { traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId };
}

async function replay(
  journal: EventInit[],
  stableEventId?: (id: string) => string,
): Promise<{ a: Ids; b: Ids }> {
  const receiver = await startOtlpReceiver();
  const harness = await startTracingHarness({
    encoding: 'proto',
    receiver,
    derivedIds: true,
    ...(stableEventId === undefined
      ? {}
      : { tracing: { stableEventId: (event) => stableEventId(event.id) } }),
  });
  for (const event of journal) harness.bus.emitEvent(event);
  const spans = await harness.spans(2);
  await harness.close();
  await receiver.close();
  return { a: idsOf(spanOfCall(spans, 'tc_a')), b: idsOf(spanOfCall(spans, 'tc_b')) };
}

describe('DerivedIdGenerator', () => {
  it('gives identical trace and span ids when the same events are replayed twice', async () => {
    const first = await replay(JOURNAL);
    const second = await replay(JOURNAL);
    expect(second).toEqual(first);
    expect(first.b.parentSpanId).toBe(first.a.spanId);
    expect(first.a.parentSpanId).toBe('');
    expect(first.a.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(first.a.traceId).toMatch(/^[0-9a-f]{32}$/);
    const generator = new DerivedIdGenerator();
    expect(first.a.spanId).toBe(generator.spanIdFor(ID(2)));
    expect(first.b.spanId).toBe(generator.spanIdFor(ID(3)));
  });

  it('derives ids from the tool call id when events have no stable id', async () => {
    // A journal without event ids: the bus makes up random ones, which must not leak into spans.
    const withoutIds = JOURNAL.map(({ id: _id, causation, ...event }) => ({
      ...event,
      causation: { ...causation, parentId: '' },
    }));
    const first = await replay(withoutIds, () => '');
    const second = await replay(withoutIds, () => '');
    expect(second).toEqual(first);
    const generator = new DerivedIdGenerator();
    expect(first.a.spanId).toBe(generator.spanIdFor('s1\u0000tc_a'));
  });

  it('hands out random ids when nothing is queued, and queued ids once', () => {
    const generator = new DerivedIdGenerator();
    const spanIds = new Set(Array.from({ length: 1000 }, () => generator.generateSpanId()));
    const traceIds = new Set(Array.from({ length: 1000 }, () => generator.generateTraceId()));
    expect(spanIds.size).toBe(1000);
    expect(traceIds.size).toBe(1000);
    for (const id of spanIds) expect(id).toMatch(/^[0-9a-f]{16}$/);
    for (const id of traceIds) expect(id).toMatch(/^[0-9a-f]{32}$/);
    generator.queue('0123456789abcdef0123456789abcdef', 'fedcba9876543210');
    expect(generator.generateSpanId()).toBe('fedcba9876543210');
    expect(generator.generateTraceId()).toBe('0123456789abcdef0123456789abcdef');
    expect(generator.generateSpanId()).not.toBe('fedcba9876543210');
    generator.queue('0123456789abcdef0123456789abcdef', 'fedcba9876543210');
    generator.clearQueue();
    expect(generator.generateTraceId()).not.toBe('0123456789abcdef0123456789abcdef');
  });

  it('derives different ids for different keys, the same for the same key', () => {
    const generator = new DerivedIdGenerator();
    const ids = new Set(Array.from({ length: 10_000 }, (_, n) => generator.spanIdFor(ID(n))));
    expect(ids.size).toBe(10_000);
    expect(generator.traceIdFor('root\u0000x')).toBe(
      new DerivedIdGenerator().traceIdFor('root\u0000x'),
    );
    expect(generator.traceIdFor('a')).not.toBe(generator.traceIdFor('b'));
  });
});
