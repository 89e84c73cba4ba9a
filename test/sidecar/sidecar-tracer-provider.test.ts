import {
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type DiagLogger,
  type TracerProvider,
} from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  type IdGenerator,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { DerivedIdGenerator, traceToolCalls } from '../../src/otel/index.js';
import { EventPipeline } from '../../src/sidecar/event-pipeline.js';
import { OtlpHttpSpanExporter } from '../../src/sidecar/otlp-http-span-exporter.js';
import { OtlpTraceEncoder } from '../../src/sidecar/otlp-trace-encoder.js';
import { ReliableSpanProcessor } from '../../src/sidecar/reliable-span-processor.js';
import { SidecarMetrics } from '../../src/sidecar/sidecar-metrics.js';
import { SidecarTracerProvider } from '../../src/sidecar/sidecar-tracer-provider.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../src/testing/index.js';
import { journalText } from './journal-lines.js';

type ProviderKind = 'sdk' | 'sidecar';

/** Ids from a counter, so both providers get the same ones if they draw them in the same order. */
class CountingIdGenerator implements IdGenerator {
  #next = 0;

  generateTraceId(): string {
    return `7${(this.#next += 1).toString(16).padStart(31, '0')}`;
  }

  generateSpanId(): string {
    return `5${(this.#next += 1).toString(16).padStart(15, '0')}`;
  }
}

/** Keeps every ended span, for the encoder, and passes everything on to `next`. */
class KeepingProcessor implements SpanProcessor {
  readonly ended: ReadableSpan[] = [];
  readonly #next: SpanProcessor;

  constructor(next: SpanProcessor) {
    this.#next = next;
  }

  onStart(...args: Parameters<SpanProcessor['onStart']>): void {
    this.#next.onStart(...args);
  }

  onEnd(span: ReadableSpan): void {
    this.ended.push(span);
    this.#next.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.#next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#next.shutdown();
  }
}

const resource = defaultResource().merge(
  resourceFromAttributes({ 'service.name': 'tracer-provider-test' }),
);

/** One provider of `kind` exporting through the sidecar's processor into its own receiver. */
async function pipeline(kind: ProviderKind, idGenerator: IdGenerator) {
  const receiver = await startOtlpReceiver();
  const processor = new KeepingProcessor(
    new ReliableSpanProcessor(new OtlpHttpSpanExporter({ url: receiver.tracesUrl }), {
      scheduleDelayMs: 5,
    }),
  );
  const provider =
    kind === 'sdk'
      ? new BasicTracerProvider({ resource, idGenerator, spanProcessors: [processor] })
      : new SidecarTracerProvider({ resource, idGenerator, spanProcessor: processor });
  return { receiver, processor, provider };
}

/** Spans in a comparable order, with the encoding they came in left out. */
function comparable(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  return [...spans].sort((left, right) => (left.spanId < right.spanId ? -1 : 1));
}

/** One error for both runs: its stack names the line each run was called from. */
const EXCEPTION = new TypeError('bad input');

/** The same calls on the API, covering everything a span records and every limit. */
function script(provider: TracerProvider): void {
  const tracer = provider.getTracer('script', '1.2.3', { schemaUrl: 'https://example.com/s' });
  const many: Attributes = {};
  for (let index = 0; index < 140; index += 1) many[`key.${index}`] = index;
  const root = tracer.startSpan('root', {
    kind: SpanKind.SERVER,
    startTime: [1_777_636_800, 123_456_789],
    attributes: {
      text: 'plain',
      integer: 42,
      double: -0.25,
      flag: false,
      strings: ['a', null, 'b'],
      numbers: [1, 2.5],
      empty: '',
      missing: undefined,
      nothing: null as unknown as undefined,
      mixed: [1, 'a'] as unknown as string[],
      object: { a: 1 } as unknown as string,
      '': 'no key',
      ...many,
    },
    links: [
      {
        context: {
          traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
          spanId: '00f067aa0ba902b7',
          traceFlags: TraceFlags.SAMPLED,
        },
        attributes: { why: 'follows', dropped: undefined },
      },
    ],
  });
  root.setAttribute('key.0', 'replaced in place');
  root.setAttribute('one.too.many', 1);
  for (let index = 0; index < 130; index += 1) {
    root.addLink({
      context: {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        spanId: '00f067aa0ba902b8',
        traceFlags: TraceFlags.NONE,
      },
      ...(index % 2 === 0 ? { attributes: { index } } : {}),
    });
  }
  for (let index = 0; index < 140; index += 1) {
    root.addEvent(`event ${index}`, { index, note: 'n'.repeat(index), gone: undefined }, [
      1_777_636_801,
      index,
    ]);
  }
  root.addEvent('time as second argument', [1_777_636_801, 999]);
  root.addEvent('epoch millis', { at: 'date', '': 'no key' }, new Date(1_777_636_801_500));
  root.setStatus({ code: SpanStatusCode.ERROR, message: 'first' });
  root.setStatus({ code: SpanStatusCode.UNSET });
  root.setStatus({ code: SpanStatusCode.ERROR, message: 'second ☃' });
  root.updateName('root renamed');
  root.recordException(EXCEPTION, [1_777_636_802, 1]);
  root.end([1_777_636_802, 999_999_999]);
  root.setAttribute('after.end', 1);
  root.addEvent('after end');
  root.setStatus({ code: SpanStatusCode.OK });
  root.end([1_777_636_803, 0]);

  const child = tracer.startSpan(
    'child',
    { startTime: [1_777_636_800, 500] },
    trace.setSpan(ROOT_CONTEXT, root),
  );
  child.setStatus({ code: SpanStatusCode.OK });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'ignored: OK is final' });
  // Ends before it starts: moved to the start.
  child.end([1_777_636_799, 0]);

  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState('vendor=value'),
  });
  tracer
    .startSpan('under remote', { kind: SpanKind.CONSUMER, startTime: 1_777_636_805_250 }, remote)
    .end(new Date(1_777_636_806_000));
  tracer
    .startSpan('root option', { root: true, startTime: [1_777_636_807, 0] }, remote)
    .end([1_777_636_807, 1]);
  const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319d',
    spanId: 'b7ad6b7169203332',
    traceFlags: TraceFlags.NONE,
  });
  const notRecorded = tracer.startSpan('unsampled parent', {}, unsampled);
  expect(notRecorded.isRecording()).toBe(false);
  notRecorded.end();
  provider
    .getTracer('other')
    .startSpan('other scope', { startTime: [1, 2] })
    .end([3, 4]);
}

describe('SidecarTracerProvider', () => {
  let receivers: OtlpReceiver[] = [];
  const warnings: string[] = [];
  const logger: DiagLogger = {
    error: (message) => warnings.push(`error: ${message}`),
    warn: (message) => warnings.push(`warn: ${message}`),
    info: () => {},
    debug: () => {},
    verbose: () => {},
  };

  beforeEach(() => {
    warnings.length = 0;
    diag.setLogger(logger, DiagLogLevel.WARN);
  });

  afterEach(async () => {
    diag.disable();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    receivers = [];
  });

  async function both(
    run: (kind: ProviderKind) => Promise<Awaited<ReturnType<typeof pipeline>>>,
  ): Promise<Record<ProviderKind, Awaited<ReturnType<typeof pipeline>>>> {
    const sdk = await run('sdk');
    const sidecar = await run('sidecar');
    receivers.push(sdk.receiver, sidecar.receiver);
    return { sdk, sidecar };
  }

  describe('startSpan()', () => {
    it('exports exactly what the SDK provider exports for the same calls', async () => {
      const runs = await both(async (kind) => {
        const run = await pipeline(kind, new CountingIdGenerator());
        script(run.provider);
        await run.processor.forceFlush();
        return run;
      });
      const sdk = comparable(runs.sdk.receiver.spans);
      expect(sdk).toHaveLength(5);
      expect(comparable(runs.sidecar.receiver.spans)).toEqual(sdk);
      // The receiver does not keep every field (event and link drop counts): compare the bytes.
      const encoder = new OtlpTraceEncoder();
      expect(encoder.encode(runs.sidecar.processor.ended)).toEqual(
        encoder.encode(runs.sdk.processor.ended),
      );
      const root = sdk.find((span) => span.name === 'root renamed')!;
      expect(root.droppedAttributesCount).toBe(20);
      expect(root.droppedEventsCount).toBe(15);
      expect(root.droppedLinksCount).toBe(3);
    });

    it('keeps the HrTimes it is given, to the nanosecond and as the same arrays', () => {
      const provider = new SidecarTracerProvider({
        resource,
        idGenerator: new CountingIdGenerator(),
        spanProcessor: new KeepingProcessor(new ReliableSpanProcessor(noExport())),
      });
      const start: [number, number] = [1_777_636_800, 1];
      const end: [number, number] = [1_777_636_800, 999_999_999];
      const span = provider.getTracer('t').startSpan('s', { startTime: start });
      span.end(end);
      const readable = span as unknown as ReadableSpan;
      expect(readable.startTime).toBe(start);
      expect(readable.endTime).toBe(end);
      expect(readable.duration).toEqual([0, 999_999_998]);
    });
  });

  describe('Span', () => {
    it('is recording until it ends, then ignores calls with one warning', () => {
      const provider = new SidecarTracerProvider({
        resource,
        idGenerator: new CountingIdGenerator(),
        spanProcessor: new ReliableSpanProcessor(noExport()),
      });
      const span = provider.getTracer('t').startSpan('s');
      expect(span.isRecording()).toBe(true);
      expect(span.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
      span.end();
      expect(span.isRecording()).toBe(false);
      span.setAttribute('late', 1);
      span.addEvent('late');
      span.end();
      expect((span as unknown as ReadableSpan).attributes).toEqual({});
      expect((span as unknown as ReadableSpan).events).toEqual([]);
      expect(warnings.filter((warning) => warning.includes('ended Span'))).toHaveLength(1);
    });
  });

  describe('forceFlush() and shutdown()', () => {
    it('reach the span processor', async () => {
      const calls: string[] = [];
      const processor: SpanProcessor = {
        onStart: () => {},
        onEnd: () => {},
        forceFlush: () => (calls.push('forceFlush'), Promise.resolve()),
        shutdown: () => (calls.push('shutdown'), Promise.resolve()),
      };
      const provider = new SidecarTracerProvider({
        resource,
        idGenerator: new CountingIdGenerator(),
        spanProcessor: processor,
      });
      await provider.forceFlush();
      await provider.shutdown();
      expect(calls).toEqual(['forceFlush', 'shutdown']);
    });
  });

  describe('with traceToolCalls', () => {
    it('gives the receiver the same spans as the SDK provider for a replayed journal', async () => {
      const journal = Buffer.from(
        journalText({ calls: 30, nested: true, leaveLastOpen: true }) +
          journalText({ calls: 10, firstCall: 30, withoutEventIds: true, sessionId: 's2' }),
      );
      const runs = await both(async (kind) => {
        const idGenerator = new DerivedIdGenerator();
        const run = await pipeline(kind, idGenerator);
        const bus = new EventBus({ ringSize: 0 });
        const events = new EventPipeline({
          bus,
          metrics: new SidecarMetrics(),
          maxLineBytes: 1024 * 1024,
        });
        const tracing = traceToolCalls(bus, {
          tracerProvider: run.provider,
          idGenerator,
          stableEventId: events.stableEventId,
          parentContext: events.parentContext,
          captureContent: true,
        });
        events.ingestBody(journal, 'test');
        await tracing.shutdown();
        await run.processor.forceFlush();
        return run;
      });
      const sdk = comparable(runs.sdk.receiver.spans);
      expect(sdk).toHaveLength(40);
      expect(
        sdk.filter((span) => span.attributes['tooltrace.end_reason'] === 'shutdown'),
      ).toHaveLength(1);
      expect(comparable(runs.sidecar.receiver.spans)).toEqual(sdk);
      const encoder = new OtlpTraceEncoder();
      expect(encoder.encode(runs.sidecar.processor.ended)).toEqual(
        encoder.encode(runs.sdk.processor.ended),
      );
    });
  });
});

/** An exporter that accepts everything and sends nothing. */
function noExport(): ConstructorParameters<typeof ReliableSpanProcessor>[0] {
  return {
    export: (_spans, done) => done({ code: 0 }),
    shutdown: () => Promise.resolve(),
  };
}
