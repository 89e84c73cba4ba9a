import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { CollectedMetricReader } from '../../../src/demo/collected-metric-reader.js';
import { EventBus, type BusEvent } from '../../../src/bus/index.js';
import { traceToolCalls, type TraceToolCallsOptions } from '../../../src/otel/index.js';

interface Run {
  readonly bus: EventBus;
  readonly exporter: InMemorySpanExporter;
  readonly tracing: ReturnType<typeof traceToolCalls>;
}

function start(options: TraceToolCallsOptions): Run {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const bus = new EventBus({ dispatchFrames: false });
  const tracing = traceToolCalls(bus, { tracerProvider, liveUpdates: false, ...options });
  return { bus, exporter, tracing };
}

function invoke(bus: EventBus, index: number): BusEvent {
  return bus.emit('tool.invoke', { id: `tc_${index}`, name: 'pay', arguments: {} });
}

/** What a tool that keeps going after its call was cut short emits: as the bridge would. */
function causedBy(call: BusEvent): { causation: { parentId: string; parentSeq: number } } {
  return { causation: { parentId: call.id, parentSeq: call.causation.sequence } };
}

function partial(bus: EventBus, call: BusEvent, sequence: number): void {
  const id = (call.payload as { id: string }).id;
  const payload = { tool_name: 'pay', tool_id: id, turn_id: '', sequence, payload: 'more' };
  bus.emit('tool.stream.partial', payload, causedBy(call));
}

function result(bus: EventBus, call: BusEvent): void {
  const id = (call.payload as { id: string }).id;
  bus.emit('tool.result', { id, name: 'pay', output: 'late' }, causedBy(call));
}

/** Spans exported per tool call id. */
function spansPerCall(exporter: InMemorySpanExporter): Map<string, number> {
  const counts = new Map<string, number>();
  for (const span of exporter.getFinishedSpans()) {
    const id = String(span.attributes['gen_ai.tool.call.id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('traceToolCalls()', () => {
  describe('calls cut short and answered late, at scale', () => {
    it('exports one span per call and counts every late result', async () => {
      const { bus, exporter, tracing } = start({ maxOpenSpans: 500 });
      const calls = Array.from({ length: 5_000 }, (_, index) => invoke(bus, index));
      for (const call of calls) result(bus, call);
      await tracing.shutdown();

      const counts = spansPerCall(exporter);
      expect(counts.size).toBe(5_000);
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
      expect(tracing.stats()).toMatchObject({
        lateEvents: 4_500,
        orphanSpans: 0,
        spansStarted: 5_000,
        spansEnded: { evicted: 4_500, result: 500 },
      });
    });

    it('counts a tool that keeps streaming after eviction as late, starting no span', async () => {
      const { bus, exporter, tracing } = start({ maxOpenSpans: 100 });
      const calls = Array.from({ length: 1_000 }, (_, index) => invoke(bus, index));
      for (let sequence = 1; sequence <= 5; sequence += 1) {
        for (const call of calls) partial(bus, call, sequence);
      }
      await tracing.shutdown();

      expect(exporter.getFinishedSpans()).toHaveLength(1_000);
      expect(tracing.stats()).toMatchObject({ lateEvents: 4_500, orphanSpans: 0 });
    });

    it('keeps 16 to 32 bytes per ended call', async () => {
      const { bus, tracing } = start({ maxOpenSpans: 10 });
      for (let index = 0; index < 20_000; index += 1) invoke(bus, index);
      const { endedCalls } = tracing.stats();
      expect(endedCalls.keys).toBe(19_990);
      expect(endedCalls.bytes / endedCalls.keys).toBeGreaterThanOrEqual(16);
      expect(endedCalls.bytes / endedCalls.keys).toBeLessThanOrEqual(32);
      await tracing.shutdown();
    });

    it('forgets past maxEndedCalls into late events, never into a second span', async () => {
      const { bus, exporter, tracing } = start({ maxOpenSpans: 10, maxEndedCalls: 100 });
      const calls = Array.from({ length: 2_000 }, (_, index) => invoke(bus, index));
      for (const call of calls) result(bus, call);
      await tracing.shutdown();

      const { endedCalls, lateEvents, orphanSpans } = tracing.stats();
      expect(endedCalls.forgotten).toBeGreaterThan(1_000);
      expect(endedCalls.keys).toBeLessThanOrEqual(200);
      const counts = spansPerCall(exporter);
      expect(counts.size).toBe(2_000);
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
      expect({ lateEvents, orphanSpans }).toEqual({ lateEvents: 1_990, orphanSpans: 0 });
    });

    it('reports late events in the tooltrace.tool.events.dropped metric, by reason', async () => {
      const reader = new CollectedMetricReader();
      const meterProvider = new MeterProvider({ readers: [reader] });
      const { bus, tracing } = start({ maxOpenSpans: 10, meterProvider });
      const calls = Array.from({ length: 50 }, (_, index) => invoke(bus, index));
      for (const call of calls) result(bus, call);
      await tracing.shutdown();

      const { resourceMetrics } = await reader.collect();
      const dropped = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((metric) => metric.descriptor.name === 'tooltrace.tool.events.dropped');
      const late = dropped?.dataPoints.find(
        (point) => point.attributes['tooltrace.drop.reason'] === 'late',
      );
      expect(late?.value).toBe(40);
      await meterProvider.shutdown();
    });

    it('still starts a span for a result whose invoke it never saw', async () => {
      const { bus, exporter, tracing } = start({ maxOpenSpans: 10, maxEndedCalls: 100 });
      for (let index = 0; index < 500; index += 1) invoke(bus, index);
      bus.emit('tool.result', { id: 'tc_new', name: 'pay', output: 'ok' });
      await tracing.shutdown();

      expect(spansPerCall(exporter).get('tc_new')).toBe(1);
      expect(tracing.stats()).toMatchObject({ orphanSpans: 1, lateEvents: 0 });
    });
  });
});
