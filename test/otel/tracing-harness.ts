import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanLimits } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { EventBus } from '../../src/bus/index.js';
import {
  DerivedIdGenerator,
  traceReplay,
  traceToolCalls,
  type ReplayTracingOptions,
  type ToolCallTracing,
} from '../../src/otel/index.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../src/testing/index.js';

/** How spans travel to the receiver: OTLP/HTTP JSON or OTLP/HTTP protobuf. */
export type Encoding = 'json' | 'proto';

/** The options only `traceReplay` takes. */
const REPLAY_CONTROLS = [
  'idGenerator',
  'parentContext',
  'reorderWindowMs',
  'maxRememberedEvents',
  'stableEventId',
  'onSpanEnd',
] as const satisfies ReadonlyArray<keyof ReplayTracingOptions>;

/** Options for {@link startTracingHarness}. */
export interface TracingHarnessOptions {
  /** @default 'json' */
  encoding?: Encoding;
  /**
   * Options for the subscriber; `tracerProvider` (and `idGenerator`) are filled in. With a
   * replay control among them, or `derivedIds`, they go to `traceReplay`, else to
   * `traceToolCalls`.
   */
  tracing?: ReplayTracingOptions;
  /** Give the provider and `traceReplay` one `DerivedIdGenerator`. */
  derivedIds?: boolean;
  /** A receiver to reuse; one is started (and closed with the harness) otherwise. */
  receiver?: OtlpReceiver;
  /** Register the provider globally (context manager, propagator), as an application would. */
  register?: boolean;
  spanLimits?: SpanLimits;
  /**
   * The BatchSpanProcessor's delay between exports. Long by default: tests flush when they
   * want spans, so nothing arrives on its own in between.
   * @default 60000
   */
  scheduledDelayMillis?: number;
}

/**
 * The real pipeline the tests assert on: an EventBus, `traceToolCalls` (or `traceReplay`) on it, a
 * NodeTracerProvider with a BatchSpanProcessor and the real OTLP/HTTP exporter (JSON or
 * protobuf), and the real in-process OTLP receiver from `tooltrace/testing`.
 */
export interface TracingHarness {
  readonly bus: EventBus;
  readonly receiver: OtlpReceiver;
  readonly provider: NodeTracerProvider;
  readonly tracing: ToolCallTracing;
  readonly idGenerator: DerivedIdGenerator | undefined;
  /** Flushes and waits until `count` spans arrived; returns them. */
  spans(count: number): Promise<ReceivedSpan[]>;
  /** The one arrived span named `name` (flushes first). */
  span(name: string): Promise<ReceivedSpan>;
  /** Shuts the subscriber and provider down and closes the receiver (if the harness made it). */
  close(): Promise<void>;
}

export async function startTracingHarness(
  options: TracingHarnessOptions = {},
): Promise<TracingHarness> {
  const receiver = options.receiver ?? (await startOtlpReceiver());
  const exporter =
    options.encoding === 'proto'
      ? new OTLPProtoTraceExporter({ url: receiver.tracesUrl })
      : new OTLPJsonTraceExporter({ url: receiver.tracesUrl });
  const idGenerator = options.derivedIds === true ? new DerivedIdGenerator() : undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'tooltrace-test' }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        scheduledDelayMillis: options.scheduledDelayMillis ?? 60_000,
      }),
    ],
    ...(idGenerator === undefined ? {} : { idGenerator }),
    ...(options.spanLimits === undefined ? {} : { spanLimits: options.spanLimits }),
  });
  if (options.register === true) provider.register();
  const bus = new EventBus();
  const replay =
    idGenerator !== undefined ||
    REPLAY_CONTROLS.some((name) => options.tracing?.[name] !== undefined);
  const tracing = replay
    ? traceReplay(bus, {
        ...options.tracing,
        tracerProvider: provider,
        ...(idGenerator === undefined ? {} : { idGenerator }),
      })
    : traceToolCalls(bus, { ...options.tracing, tracerProvider: provider });
  const spans = async (count: number): Promise<ReceivedSpan[]> => {
    await tracing.forceFlush();
    return receiver.waitForSpans(count, 10_000);
  };
  return {
    bus,
    receiver,
    provider,
    tracing,
    idGenerator,
    spans,
    async span(name: string): Promise<ReceivedSpan> {
      await tracing.forceFlush();
      const matching = receiver.spans.filter((span) => span.name === name);
      if (matching.length !== 1) {
        throw new Error(`expected one span named ${name}, got ${matching.length}`);
      }
      return matching[0]!;
    },
    async close(): Promise<void> {
      await tracing.shutdown();
      await provider.shutdown();
      if (options.receiver === undefined) await receiver.close();
    },
  };
}

/** A fixed instant with every nanosecond digit set, to check times survive exactly. */
export const T0 = 1_767_225_600_123_456_789n;

/** `T0` plus `milliseconds` and `nanoseconds`. */
export function at(milliseconds: number, nanoseconds = 0): bigint {
  return T0 + BigInt(milliseconds) * 1_000_000n + BigInt(nanoseconds);
}

/** The arrived span whose `gen_ai.tool.call.id` is `callId`. */
export function spanOfCall(spans: readonly ReceivedSpan[], callId: string): ReceivedSpan {
  const span = spans.find((candidate) => candidate.attributes['gen_ai.tool.call.id'] === callId);
  if (span === undefined) throw new Error(`no span for tool call ${callId}`);
  return span;
}
