import { createNoopMeter, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { EventBus } from '../../bus/index.js';
import {
  DerivedIdGenerator,
  traceToolCalls,
  type ToolCallTracing,
  type TraceBy,
} from '../../otel/index.js';
import { ClientAttributeProcessor } from './client-attribute-processor.js';
import type { EventPipeline } from './event-pipeline.js';

/** Records nothing: the sidecar never falls back to a global meter provider. */
const NO_METRICS: MeterProvider = { getMeter: () => createNoopMeter() };

/** Options for {@link traceSidecarBus}. */
export interface SidecarTracingOptions {
  bus: EventBus;
  pipeline: EventPipeline;
  /** Where ended spans go (the export room's processor). */
  processor: SpanProcessor;
  resource: Resource;
  /** Where the tool-call metrics go; `undefined` records none. */
  meterProvider?: MeterProvider | undefined;
  captureContent?: boolean;
  idleTimeoutMs?: number;
  liveUpdates?: boolean;
  liveIntervalMs?: number;
  excludeEvents?: string[];
  traceBy?: TraceBy;
  agentName?: string;
}

/**
 * Traces the sidecar's bus with the same `traceToolCalls` subscriber as library mode, recording
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
  const { pipeline } = options;
  return traceToolCalls(options.bus, {
    tracerProvider,
    idGenerator,
    stableEventId: pipeline.stableEventId,
    parentContext: pipeline.parentContext,
    meterProvider: options.meterProvider ?? NO_METRICS,
    // `traceToolCalls` reads an option set to `undefined` as not given: its default applies.
    captureContent: options.captureContent,
    idleTimeoutMs: options.idleTimeoutMs,
    liveUpdates: options.liveUpdates,
    liveIntervalMs: options.liveIntervalMs,
    excludeEvents: options.excludeEvents,
    traceBy: options.traceBy,
    agentName: options.agentName,
  });
}
