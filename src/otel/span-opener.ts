import {
  ROOT_CONTEXT,
  SpanKind,
  diag,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import type { BusEvent } from '../bus/index.js';
import type { CausalAncestry, CausalIndex } from './causal-index.js';
import type { ErrorReporter } from './error-reporter.js';
import type { OpenSpans } from './open-spans.js';
import type { ResolvedOptions } from './options.js';
import { traceKey } from './span-keys.js';

/** What {@link SpanOpener.open} starts a span from. */
export interface OpenRequest {
  readonly name: string;
  readonly startTime: HrTime;
  readonly attributes: Attributes;
  readonly parentContext: Context;
  /** What the span id is derived from (`''`: no derived id). */
  readonly selfKey: string;
  /** What a root span's trace id is derived from; asked only for a root span. */
  readonly traceKey: () => string;
  readonly links?: Link[] | undefined;
}

/** Finds the agent span that holds an event's work when nothing names one. */
export type ContainerLookup = (event: BusEvent) => SpanContext | undefined;

const INVALID: SpanContext = { traceId: '', spanId: '', traceFlags: 0 };

/**
 * Starts the spans of both kinds: walks the causal chain for the parent, falls back to the
 * `parentContext` hook or the context active at dispatch, then to the agent span holding the
 * event's work, and gives the span derived ids when a `DerivedIdGenerator` is in use.
 */
export class SpanOpener {
  readonly #tracer: Tracer;
  readonly #options: ResolvedOptions;
  readonly #index: CausalIndex;
  readonly #openSpans: OpenSpans;
  readonly #errors: ErrorReporter;
  #idGeneratorChecked = false;

  constructor(
    tracer: Tracer,
    options: ResolvedOptions,
    state: { index: CausalIndex; openSpans: OpenSpans; errors: ErrorReporter },
  ) {
    this.#tracer = tracer;
    this.#options = options;
    this.#index = state.index;
    this.#openSpans = state.openSpans;
    this.#errors = state.errors;
  }

  /**
   * Starts a span (kind INTERNAL) under `parentContext`, giving it derived ids when a
   * `DerivedIdGenerator` is in use: the span id from `selfKey`, and for a root span the trace id
   * from `traceKey()`.
   */
  open(request: OpenRequest): Span {
    const { selfKey, parentContext } = request;
    const generator = this.#options.idGenerator;
    let spanId: string | undefined;
    if (generator !== undefined && selfKey !== '') {
      spanId = generator.spanIdFor(selfKey);
      const root = !isSpanContextValid(trace.getSpanContext(parentContext) ?? INVALID);
      const traceId = root ? generator.traceIdFor(request.traceKey()) : undefined;
      generator.queue(traceId, spanId);
    }
    let span: Span;
    try {
      const options: SpanOptions = {
        kind: SpanKind.INTERNAL,
        startTime: request.startTime,
        attributes: request.attributes,
      };
      if (request.links !== undefined && request.links.length > 0) options.links = request.links;
      span = this.#tracer.startSpan(request.name, options, parentContext);
    } finally {
      generator?.clearQueue();
    }
    if (spanId !== undefined && !this.#idGeneratorChecked && span.isRecording()) {
      this.#idGeneratorChecked = true;
      if (span.spanContext().spanId !== spanId) {
        diag.warn(
          'tooltrace: options.idGenerator is not the id generator of the tracer provider; ' +
            'pass the same DerivedIdGenerator to both, or span ids will not be derived',
        );
      }
    }
    return span;
  }

  /**
   * Walks up from `parentId` to the nearest ancestor with a span, open (of either kind) or
   * ended; the id the walk reached names the trace group of a root span.
   */
  ancestry(parentId: string, selfKey: string): CausalAncestry {
    return this.#index.ancestry(parentId, selfKey, this.#openSpanContext);
  }

  /**
   * The context a span starts in: under `parent` when one was found (a causal ancestor, or a
   * span the events name), else the `parentContext` hook's answer or `activeContext` when it
   * holds a span, else under the container `heuristic` finds (the newest open turn of the
   * session), else a root.
   */
  contextFor(
    parent: SpanContext | undefined,
    event: BusEvent,
    activeContext: Context,
    heuristic: ContainerLookup,
  ): Context {
    if (parent !== undefined) return trace.setSpanContext(ROOT_CONTEXT, parent);
    const hook = this.#options.parentContext;
    let context = activeContext;
    if (hook !== undefined) {
      try {
        context = hook(event) ?? ROOT_CONTEXT;
      } catch (error) {
        this.#errors.report('hook', error);
        context = ROOT_CONTEXT;
      }
    }
    if (isSpanContextValid(trace.getSpanContext(context) ?? INVALID)) return context;
    const container = heuristic(event);
    return container === undefined ? context : trace.setSpanContext(context, container);
  }

  /** The key a root span's trace id is derived from, per `traceBy`. */
  traceKey(sessionId: string, selfKey: string, rootId: string): string {
    return traceKey(this.#options.traceBy, sessionId, selfKey, rootId);
  }

  readonly #openSpanContext = (id: string): SpanContext | undefined =>
    this.#openSpans.byStartId(id)?.spanContext;
}
