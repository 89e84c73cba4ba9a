import { createNoopMeter, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { EventBus } from '../../bus/index.js';
import {
  DerivedIdGenerator,
  traceReplay,
  type ToolCallTracing,
  type TraceToolCallsOptions,
} from '../../otel/index.js';
import { ClientAttributeProcessor } from './client-attribute-processor.js';
import type { EventPipeline } from './event-pipeline.js';
import { replayAwareMeterProvider } from './replay-aware-meter-provider.js';

/** Records nothing: the sidecar never falls back to a global meter provider. */
const NO_METRICS: MeterProvider = { getMeter: () => createNoopMeter() };

/** The tracing options the sidecar's settings choose; the rest it sets itself. */
interface ChosenTracingOptions extends Pick<
  TraceToolCallsOptions,
  'captureContent' | 'idleTimeoutMs' | 'excludeEvents' | 'traceBy' | 'agentName'
> {
  /** `--live-updates`. @default `true`, unless `TOOLTRACE_LIVE_UPDATES` is `false` */
  liveUpdates?: boolean | undefined;
  /** `--live-interval`. @default 1000 */
  liveIntervalMs?: number | undefined;
}

/** Options for {@link traceSidecarBus}. */
export interface SidecarTracingOptions extends ChosenTracingOptions {
  bus: EventBus;
  pipeline: EventPipeline;
  /** Where ended spans go (the export room's processor). */
  processor: SpanProcessor;
  resource: Resource;
  /** Where the tool-call metrics go; `undefined` records none. */
  meterProvider?: MeterProvider | undefined;
  /**
   * A later run resumes these events (a followed file with a checkpoint): calls open at
   * shutdown are cut, their snapshot exported, rather than ended. @default false
   */
  resumable?: boolean;
}

/**
 * Traces the sidecar's bus with the same subscriber as library mode (`traceReplay`), recording
 * spans with the SDK's `BasicTracerProvider`. Ids are derived from the events, so a replay after
 * a restart yields identical spans; parents and stable ids come from the pipeline.
 */
export function traceSidecarBus(options: SidecarTracingOptions): ToolCallTracing {
  const idGenerator = new DerivedIdGenerator();
  const provider = new BasicTracerProvider({
    resource: options.resource,
    idGenerator,
    // The client's name goes on each span before the export processor sees it start.
    spanProcessors: [new ClientAttributeProcessor(), options.processor],
  });
  // The subscriber sees a provider without `forceFlush`: it would wait on the processor for as
  // long as the exporter is down, while the sidecar flushes only as long as its deadline allows.
  const tracerProvider: TracerProvider = {
    getTracer: (name, version, tracerOptions) => provider.getTracer(name, version, tracerOptions),
  };
  const {
    bus,
    pipeline,
    processor: _processor,
    resource: _resource,
    liveUpdates,
    liveIntervalMs,
    resumable,
    ...chosen
  } = options;
  // `traceReplay` reads an option set to `undefined` as not given: its default applies.
  return traceReplay(bus, {
    ...chosen,
    liveUpdates: { enabled: liveUpdates, intervalMs: liveIntervalMs },
    tracerProvider,
    idGenerator,
    resumable: resumable === true,
    stableEventId: pipeline.stableEventId,
    parentContext: pipeline.parentContext,
    meterProvider:
      options.meterProvider === undefined
        ? NO_METRICS
        : replayAwareMeterProvider(options.meterProvider, () => pipeline.replaying),
  });
}
