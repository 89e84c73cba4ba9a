import {
  context as contextApi,
  isSpanContextValid,
  INVALID_SPAN_CONTEXT,
  SpanKind,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { isTracingSuppressed, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { IdGenerator, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { RecordedSpan } from './recorded-span.js';

/** What every tracer of a {@link SidecarTracerProvider} shares. */
export interface SidecarTracerSettings {
  readonly resource: Resource;
  readonly idGenerator: IdGenerator;
  readonly processor: SpanProcessor;
}

/**
 * The tracer of a `SidecarTracerProvider`: it starts {@link RecordedSpan}s the way the SDK's
 * tracer does with its default parent-based, always-on sampler. The span id is drawn first, a
 * trace id only for a span without a valid parent; a span under an unsampled parent is not
 * recorded; suppressed tracing gives a non-recording span.
 */
export class SidecarTracer implements Tracer {
  readonly #scope: InstrumentationScope;
  readonly #settings: SidecarTracerSettings;

  constructor(scope: InstrumentationScope, settings: SidecarTracerSettings) {
    this.#scope = scope;
    this.#settings = settings;
  }

  startSpan(name: string, options: SpanOptions = {}, context = contextApi.active()): Span {
    if (options.root === true) context = trace.deleteSpan(context);
    if (isTracingSuppressed(context)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const { idGenerator } = this.#settings;
    const parent = trace.getSpanContext(context);
    const spanId = idGenerator.generateSpanId();
    const hasParent = parent !== undefined && isSpanContextValid(parent);
    const traceId = hasParent ? parent.traceId : idGenerator.generateTraceId();
    const traceState = hasParent ? parent.traceState : undefined;
    if (hasParent && (parent.traceFlags & TraceFlags.SAMPLED) === 0) {
      return trace.wrapSpanContext({ traceId, spanId, traceFlags: TraceFlags.NONE, traceState });
    }
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
      traceState,
    };
    return new RecordedSpan({
      resource: this.#settings.resource,
      instrumentationScope: this.#scope,
      processor: this.#settings.processor,
      context,
      spanContext,
      parentSpanContext: hasParent ? parent : undefined,
      name,
      kind: options.kind ?? SpanKind.INTERNAL,
      startTime: options.startTime,
      attributes: options.attributes,
      links: options.links,
    });
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    context: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]
  ): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = rest.length > 1 ? (rest[0] as SpanOptions) : undefined;
    const parent = rest.length > 2 ? (rest[1] as Context) : contextApi.active();
    const span = this.startSpan(name, options, parent);
    return contextApi.with(trace.setSpan(parent, span), () => fn(span)) as ReturnType<F>;
  }
}
