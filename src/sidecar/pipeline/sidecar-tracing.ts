import {
  createNoopMeter,
  type Attributes,
  type MeterProvider,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { EventBus } from '../../bus/index.js';
import {
  DerivedIdGenerator,
  traceReplay,
  type ToolCallTracing,
  type TraceToolCallsOptions,
} from '../../otel/index.js';
import { ATTR_GEN_AI_CONVERSATION_ID } from '../../otel/internal.js';
import { unscopedSession } from './client-scope.js';
import type { EventPipeline } from './event-pipeline.js';
import { replayAwareMeterProvider } from './replay-aware-meter-provider.js';

/** The span attribute naming the HTTP client (its token's name) a span's events came from. */
export const ATTR_TOOLTRACE_CLIENT = 'tooltrace.client';

/** Records nothing: the sidecar never falls back to a global meter provider. */
const NO_METRICS: MeterProvider = { getMeter: () => createNoopMeter() };

/**
 * The tracing options the sidecar's settings choose (`--capture-content`, `--idle-timeout`,
 * `--exclude-events`, `--trace-by`, `--agent-name`, `--live-updates`, `--live-interval`); the
 * rest it sets itself.
 */
export interface SidecarTracingChoices extends Pick<
  TraceToolCallsOptions,
  'captureContent' | 'idleTimeoutMs' | 'excludeEvents' | 'traceBy' | 'agentName'
> {
  /** `--live-updates`. @default `true`, unless `TOOLTRACE_LIVE_UPDATES` is `false` */
  liveUpdates?: boolean | undefined;
  /** `--live-interval`. @default 1000 */
  liveIntervalMs?: number | undefined;
}

/** Options for {@link traceSidecarBus}. */
export interface SidecarTracingOptions extends SidecarTracingChoices {
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
    spanProcessors: [options.processor],
  });
  // The subscriber sees a provider without `forceFlush`: it would wait on the processor for as
  // long as the exporter is down, while the sidecar flushes only as long as its deadline allows.
  const tracerProvider: TracerProvider = {
    getTracer: (name, version, tracerOptions) =>
      clientTracer(provider.getTracer(name, version, tracerOptions)),
  };
  const { pipeline } = options;
  return traceReplay(options.bus, {
    captureContent: options.captureContent,
    idleTimeoutMs: options.idleTimeoutMs,
    excludeEvents: options.excludeEvents,
    traceBy: options.traceBy,
    agentName: options.agentName,
    liveUpdates: { enabled: options.liveUpdates, intervalMs: options.liveIntervalMs },
    tracerProvider,
    idGenerator,
    resumable: options.resumable === true,
    stableEventId: pipeline.stableEventId,
    parentContext: pipeline.parentContext,
    meterProvider:
      options.meterProvider === undefined
        ? NO_METRICS
        : replayAwareMeterProvider(options.meterProvider, () => pipeline.replaying),
  });
}

/**
 * A tracer that starts each span of an HTTP client's events with the client's name
 * (`tooltrace.client`) and the session as the client sent it: the pipeline scopes a client's
 * session ids (see `scopedSession`) so that the subscriber, which keys calls by session and
 * tool call id, never mixes two clients' `tc_1`; the scoped id is what the span would say. The
 * span is started with the right attributes and name, so nothing is rewritten on it afterwards.
 */
function clientTracer(tracer: Tracer): Tracer {
  return {
    startSpan: (name, options, context) => {
      const session = options?.attributes?.[ATTR_GEN_AI_CONVERSATION_ID];
      if (typeof session !== 'string') return tracer.startSpan(name, options, context);
      const scope = unscopedSession(session);
      if (scope === undefined) return tracer.startSpan(name, options, context);
      const attributes: Attributes = { ...options!.attributes };
      if (scope.session === '') delete attributes[ATTR_GEN_AI_CONVERSATION_ID];
      else attributes[ATTR_GEN_AI_CONVERSATION_ID] = scope.session;
      attributes[ATTR_TOOLTRACE_CLIENT] = scope.client;
      // A session's root span is named after it (`session s1`).
      const shown = name.replace(session, scope.session).trimEnd();
      return tracer.startSpan(shown, { ...options, attributes }, context);
    },
    startActiveSpan: tracer.startActiveSpan.bind<Tracer['startActiveSpan']>(tracer),
  };
}
