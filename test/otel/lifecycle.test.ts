import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BusEvent, EventBus } from '../../src/bus/index.js';
import { at, spanOfCall, startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await harness?.close();
  harness = undefined;
});

function invoke(bus: EventBus, id: string, time: bigint): BusEvent {
  return bus.emit('tool.invoke', { id, name: 'slow', arguments: {} }, { timeUnixNano: time });
}

function partial(bus: EventBus, call: BusEvent, sequence: number, time: bigint): void {
  const id = (call.payload as { id: string }).id;
  bus.emit(
    'tool.stream.partial',
    { tool_name: 'slow', tool_id: id, turn_id: '', sequence, payload: 'chunk' },
    { causation: { parentId: call.id }, timeUnixNano: time },
  );
}

describe('traceToolCalls()', () => {
  describe('nothing stays open', () => {
    it('ends a call idle for idleTimeoutMs as abandoned, at its last event', async () => {
      // Only the subscriber's clock and sweep timer are faked; the exporter keeps real timers.
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      // Minutes pass on the fake clock: in-flight snapshots would arrive too (live-updates.test.ts).
      harness = await startTracingHarness({
        tracing: { idleTimeoutMs: 60_000, liveUpdates: false },
      });
      const { bus, tracing } = harness;
      const call = invoke(bus, 'tc_1', at(0));
      vi.advanceTimersByTime(10_000);
      partial(bus, call, 1, at(10_000));
      vi.advanceTimersByTime(58_000);
      expect(tracing.stats().openSpans).toBe(1);
      vi.advanceTimersByTime(4_000);
      expect(tracing.stats()).toMatchObject({ openSpans: 0, spansEnded: { abandoned: 1 } });

      const [span] = await harness.spans(1);
      expect(span!.endTimeUnixNano).toBe(at(10_000));
      expect(span!.status).toEqual({
        code: 2,
        message: "no tool.result within 60000 ms of the call's last event",
      });
      expect(span!.attributes).toMatchObject({
        'tooltrace.end_reason': 'abandoned',
        'error.type': 'abandoned',
        'tooltrace.stream.partial.count': 1,
      });
      expect(span!.events.map((event) => event.name)).toEqual(['tool.stream.partial']);
      // A result that finally comes is late, not a second span.
      bus.emit(
        'tool.result',
        { id: 'tc_1', name: 'slow', output: '' },
        {
          causation: { parentId: call.id },
        },
      );
      expect(tracing.stats().lateEvents).toBe(1);
    });

    it('keeps a call that stays active open past idleTimeoutMs', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      harness = await startTracingHarness({
        tracing: { idleTimeoutMs: 1_000, liveUpdates: false },
      });
      const { bus, tracing } = harness;
      const call = invoke(bus, 'tc_1', at(0));
      for (let sequence = 1; sequence <= 20; sequence += 1) {
        vi.advanceTimersByTime(500);
        partial(bus, call, sequence, at(sequence * 500));
      }
      expect(tracing.stats().openSpans).toBe(1);
      bus.emit(
        'tool.result',
        { id: 'tc_1', name: 'slow', output: '' },
        {
          causation: { parentId: call.id },
          timeUnixNano: at(10_001),
        },
      );
      const [span] = await harness.spans(1);
      expect(span!.attributes['tooltrace.end_reason']).toBe('result');
      expect(span!.endTimeUnixNano).toBe(at(10_001));
    });

    it('ends the oldest open call, marked evicted, beyond maxOpenSpans', async () => {
      harness = await startTracingHarness({ tracing: { maxOpenSpans: 3 } });
      const { bus, tracing } = harness;
      const first = invoke(bus, 'tc_1', at(0));
      partial(bus, first, 1, at(5));
      invoke(bus, 'tc_2', at(10));
      invoke(bus, 'tc_3', at(20));
      expect(tracing.stats().openSpans).toBe(3);
      invoke(bus, 'tc_4', at(30));
      expect(tracing.stats()).toMatchObject({ openSpans: 3, spansEnded: { evicted: 1 } });

      const [span] = await harness.spans(1);
      expect(span!.attributes['gen_ai.tool.call.id']).toBe('tc_1');
      expect(span!.attributes['tooltrace.end_reason']).toBe('evicted');
      expect(span!.status).toEqual({ code: 0, message: '' });
      expect(span!.endTimeUnixNano).toBe(at(5));
    });

    it('ends every open call on shutdown, marked, then flushes; twice is safe', async () => {
      harness = await startTracingHarness();
      const { bus, tracing } = harness;
      invoke(bus, 'tc_1', at(0));
      const second = invoke(bus, 'tc_2', at(10));
      partial(bus, second, 1, at(15));
      // A result whose invoke never came, still inside the reorder window.
      bus.emit(
        'tool.result',
        { id: 'tc_9', name: 'lost', output: '' },
        {
          causation: { parentId: 'f'.repeat(32) },
          timeUnixNano: at(20),
        },
      );
      expect(tracing.stats()).toMatchObject({ openSpans: 2, heldEvents: 1 });

      await Promise.all([tracing.shutdown(), tracing.shutdown()]);
      await tracing.shutdown();
      const spans = harness.receiver.spans;
      expect(spans).toHaveLength(3);
      expect(spanOfCall(spans, 'tc_1').attributes['tooltrace.end_reason']).toBe('shutdown');
      expect(spanOfCall(spans, 'tc_1').endTimeUnixNano).toBe(at(0));
      expect(spanOfCall(spans, 'tc_2').attributes['tooltrace.end_reason']).toBe('shutdown');
      expect(spanOfCall(spans, 'tc_2').endTimeUnixNano).toBe(at(15));
      expect(spanOfCall(spans, 'tc_2').status.code).toBe(0);
      expect(spanOfCall(spans, 'tc_9').attributes).toMatchObject({
        'tooltrace.end_reason': 'result',
        'tooltrace.invoke.missing': true,
      });
      expect(tracing.stats()).toMatchObject({
        openSpans: 0,
        heldEvents: 0,
        spansEnded: { shutdown: 2, result: 1 },
      });
      // After shutdown the subscriber no longer listens.
      invoke(bus, 'tc_after', at(30));
      expect(tracing.stats().spansStarted).toBe(3);
    });
  });
});
