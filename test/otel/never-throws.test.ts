import {
  diag,
  DiagLogLevel,
  type DiagLogger,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import {
  DerivedIdGenerator,
  traceReplay,
  traceToolCalls,
  type EndReason,
} from '../../src/otel/index.js';
import { startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  diag.disable();
});

/** A tracer provider that is broken: every span start throws. */
const brokenProvider: TracerProvider = {
  getTracer: (): Tracer => ({
    startSpan: (): Span => {
      throw new Error('tracer exploded');
    },
    startActiveSpan: (): never => {
      throw new Error('tracer exploded');
    },
  }),
};

function captureDiag(): string[] {
  const messages: string[] = [];
  const logger: DiagLogger = {
    error: (message) => messages.push(message),
    warn: (message) => messages.push(message),
    info: () => {},
    debug: () => {},
    verbose: () => {},
  };
  diag.setLogger(logger, DiagLogLevel.WARN);
  return messages;
}

function oneCall(bus: EventBus): void {
  const invoke = bus.emit('tool.invoke', { id: 'tc_1', name: 'x', arguments: {} });
  bus.emit(
    'tool.stream.partial',
    { tool_name: 'x', tool_id: 'tc_1', turn_id: '', sequence: 1, payload: 'a' },
    { causation: { parentId: invoke.id } },
  );
  bus.emit(
    'tool.result',
    { id: 'tc_1', name: 'x', output: '' },
    {
      causation: { parentId: invoke.id },
    },
  );
}

describe('traceToolCalls()', () => {
  describe('never throws into the bus', () => {
    it('counts a failing tracer and reports it once through diag', async () => {
      const messages = captureDiag();
      const coreErrors: unknown[] = [];
      const bus = new EventBus({ onError: (error) => coreErrors.push(error) });
      const tracing = traceToolCalls(bus, { tracerProvider: brokenProvider });
      expect(() => {
        oneCall(bus);
        oneCall(bus);
      }).not.toThrow();
      expect(coreErrors).toEqual([]);
      expect(tracing.stats().errors.tracer).toBeGreaterThanOrEqual(2);
      expect(messages.filter((message) => message.includes('tooltrace'))).toHaveLength(1);
      await tracing.shutdown();
    });

    it('counts hooks that throw and still exports the span', async () => {
      const messages = captureDiag();
      const ended: EndReason[] = [];
      harness = await startTracingHarness({
        tracing: {
          parentContext: () => {
            throw new Error('no traceparent today');
          },
          onSpanEnd: (_span, reason) => {
            ended.push(reason);
            throw new Error('hook failed');
          },
        },
      });
      oneCall(harness.bus);
      const [span] = await harness.spans(1);
      expect(span!.status.code).toBe(1);
      expect(span!.parentSpanId).toBe('');
      expect(ended).toEqual(['result']);
      expect(harness.tracing.stats().errors.hook).toBe(2);
      expect(messages.filter((message) => message.includes('hook'))).toHaveLength(1);
    });

    it('keeps the SDK from dropping span events: at most maxStreamEvents + 1 per span', async () => {
      harness = await startTracingHarness({
        spanLimits: { eventCountLimit: 65 },
        tracing: { maxStreamEvents: 64 },
      });
      const invoke = harness.bus.emit('tool.invoke', { id: 'tc_1', name: 'x', arguments: {} });
      for (let sequence = 1; sequence <= 1_000; sequence += 1) {
        harness.bus.emit(
          'tool.stream.partial',
          { tool_name: 'x', tool_id: 'tc_1', turn_id: '', sequence, payload: 'a' },
          { causation: { parentId: invoke.id } },
        );
      }
      harness.bus.emit(
        'tool.result',
        { id: 'tc_1', name: 'x', output: '', error: 'boom' },
        {
          causation: { parentId: invoke.id },
        },
      );
      const [span] = await harness.spans(1);
      expect(span!.droppedEventsCount).toBe(0);
      expect(span!.events.at(-1)!.name).toBe('exception');
      expect(span!.events.length).toBeLessThanOrEqual(65);
    });

    it('resolves forceFlush and shutdown when the export fails, counting it once in diag', async () => {
      const messages = captureDiag();
      const failing: SpanExporter = {
        export: (_spans, done) =>
          done({ code: ExportResultCode.FAILED, error: new Error('collector down') }),
        shutdown: () => Promise.resolve(),
      };
      const provider = new BasicTracerProvider({
        spanProcessors: [new BatchSpanProcessor(failing, { scheduledDelayMillis: 60_000 })],
      });
      const bus = new EventBus();
      const tracing = traceToolCalls(bus, { tracerProvider: provider });
      oneCall(bus);
      await expect(tracing.forceFlush()).resolves.toBeUndefined();
      oneCall(bus);
      await expect(tracing.shutdown()).resolves.toBeUndefined();
      await expect(tracing.shutdown()).resolves.toBeUndefined();
      expect(tracing.stats().errors.export).toBe(2);
      expect(messages.filter((message) => message.includes('flushing'))).toHaveLength(1);
      await provider.shutdown().catch(() => undefined);
    });

    it('rejects bad options with a message naming the option', () => {
      const bus = new EventBus();
      expect(() => traceToolCalls(bus, { maxStreamEvents: -1 })).toThrow(/maxStreamEvents/);
      expect(() => traceToolCalls(bus, { traceBy: 'trace' as never })).toThrow(/traceBy/);
      expect(() => traceToolCalls(bus, { redact: 'yes' as never })).toThrow(/redact/);
      expect(() => traceToolCalls({} as EventBus)).toThrow(/EventBus/);
      expect(() => traceToolCalls(bus, { liveUpdates: { intervalMs: 0 } })).toThrow(
        /options\.liveUpdates\.intervalMs must be an integer >= 10/,
      );
      expect(() => traceToolCalls(bus, { liveUpdates: 'yes' as never })).toThrow(/liveUpdates/);
      expect(() => traceToolCalls(bus, { liveUpdates: { tracerProvider: 1 as never } })).toThrow(
        /liveUpdates\.tracerProvider/,
      );
    });

    it('reads only its own options; the replay controls are those of traceReplay, which checks them', async () => {
      const bus = new EventBus();
      // Not in TraceToolCallsOptions: left alone, not checked, not used.
      const own = traceToolCalls(bus, { reorderWindowMs: -1, liveUpdates: false } as never);
      await own.shutdown();
      const tracing = traceReplay(bus, {
        idGenerator: new DerivedIdGenerator(),
        stableEventId: () => '',
        reorderWindowMs: 0,
        maxRememberedEvents: 10,
        liveUpdates: false,
      });
      await tracing.shutdown();
      expect(() => traceReplay(bus, { reorderWindowMs: -1 })).toThrow(/reorderWindowMs/);
    });
  });
});
