import { afterEach, describe, expect, it } from 'vitest';
import type { BusEvent, EventBus } from '../../src/bus/index.js';
import { at, startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function invoke(bus: EventBus, id: string, time: bigint): BusEvent {
  return bus.emit('tool.invoke', { id, name: 'slow', arguments: {} }, { timeUnixNano: time });
}

function result(bus: EventBus, call: BusEvent, time: bigint): void {
  const id = (call.payload as { id: string }).id;
  bus.emit(
    'tool.result',
    { id, name: 'slow', output: 'late' },
    { causation: { parentId: call.id }, timeUnixNano: time },
  );
}

describe('traceToolCalls()', () => {
  describe('a call cut short that gets its result later', () => {
    it('counts the result as late and exports no second span with the same id', async () => {
      harness = await startTracingHarness({
        derivedIds: true,
        tracing: { maxOpenSpans: 2, maxRememberedEvents: 4, reorderWindowMs: 0 },
      });
      const { bus, tracing } = harness;
      const first = invoke(bus, 'tc_1', at(0));
      invoke(bus, 'tc_2', at(10));
      invoke(bus, 'tc_3', at(20)); // evicts tc_1
      // Enough other events that the index of recent events forgets tc_1 ended.
      for (let index = 0; index < 20; index += 1) {
        bus.emit('note', { index }, { timeUnixNano: at(30 + index) });
      }

      result(bus, first, at(100));
      await tracing.shutdown();

      const spans = harness.receiver.spans.filter(
        (span) => span.attributes['gen_ai.tool.call.id'] === 'tc_1',
      );
      expect(spans).toHaveLength(1);
      expect(spans[0]!.attributes['tooltrace.end_reason']).toBe('evicted');
      expect(tracing.stats()).toMatchObject({ lateEvents: 1, orphanSpans: 0 });
    });
  });
});
