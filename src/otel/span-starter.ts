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
  type SpanOptions,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { BusEvent } from '../bus/index.js';
import { TOOL_RESULT } from '../events/index.js';
import {
  ATTR_DEPTH,
  ATTR_EVENT_ID,
  ATTR_EVENT_PARENT_ID,
  ATTR_EVENT_SEQUENCE,
  ATTR_EVENT_SOURCE,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_PARENT_CALL_ID,
  ATTR_TURN_ID,
  toolCallAttributes,
  toolSpanName,
} from './attribute-names.js';
import type { CausalAncestry, CausalIndex } from './causal-index.js';
import type { ContentCapture } from './content-capture.js';
import type { ErrorReporter } from './error-reporter.js';
import { hrTimeFromUnixNano } from './hr-time.js';
import type { OpenCalls } from './open-calls.js';
import type { ResolvedOptions } from './options.js';
import { callKey, traceKey } from './span-keys.js';
import { readResult, streamCallId, streamToolName, type InvokeFields } from './tool-payloads.js';

/** What a span is started from: a `tool.invoke`, or (for an orphan) held events. */
export interface SpanStart {
  readonly name: string;
  readonly invokeId: string;
  readonly callId: string;
  readonly sessionId: string;
  /** Causal parent of the invoke (`''` when unknown): where the ancestor walk starts. */
  readonly parentId: string;
  readonly parentCallId: string;
  readonly startUnixNano: bigint;
  readonly attributes: Attributes;
  /** The event the `parentContext` hook is asked about. */
  readonly event: BusEvent;
  /** The context to use when there is no causal ancestor span and no hook. */
  readonly activeContext: Context;
  /** The turn the payload names (`''` when none): the parent when no causal ancestor is a span. */
  readonly turnId: string;
  /** Links to add, for instance to the `chat` span whose answer asked for the call. */
  readonly links?: Link[];
}

/** A tool span just started, and the id of its parent span (`''` for a root). */
export interface StartedSpan {
  readonly span: Span;
  readonly parentSpanId: string;
  /** The time the span started at, as given to the SDK (which keeps this very array). */
  readonly startTime: HrTime;
}

/** The agent spans that hold work whose events have no causal ancestor span. */
export interface Containers {
  /** The open turn named `turnId` in the event's session, if any. */
  named(event: BusEvent, turnId: string): SpanContext | undefined;
  /** The newest open turn (or sub-agent, or session root) the event belongs to, if any. */
  newest(event: BusEvent): SpanContext | undefined;
}

/** What tool spans learn from the agent around them (the `AgentTracer`). */
export interface AgentLookups {
  /** Where tool calls without a causal ancestor span go. */
  readonly containers: Containers;
  /** The open agent span started by the event `id`, for causal walks. */
  readonly openSpanContext: (id: string) => SpanContext | undefined;
  /** The description an `llm.request` declared for a tool, when the invoke has none. */
  readonly describe: (sessionId: string, toolName: string) => string | undefined;
  /** The event's session: its own, else the one `io.session.start` last announced. */
  readonly sessionOf: (event: BusEvent) => string;
}

/** What {@link SpanStarter.open} starts a span from. */
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

const INVALID: SpanContext = { traceId: '', spanId: '', traceFlags: 0 };

/**
 * Starts tool spans: finds the parent (nearest causal ancestor span, else the parent call id,
 * else the `parentContext` hook or the context active at dispatch, else none), queues derived
 * ids when a `DerivedIdGenerator` is in use, and builds the span's attributes.
 */
export class SpanStarter {
  readonly #tracer: Tracer;
  readonly #options: ResolvedOptions;
  readonly #index: CausalIndex;
  readonly #open: OpenCalls;
  readonly #errors: ErrorReporter;
  readonly #capture: ContentCapture | undefined;
  #idGeneratorChecked = false;
  #agent: AgentLookups | undefined;

  constructor(
    tracer: Tracer,
    options: ResolvedOptions,
    state: { index: CausalIndex; open: OpenCalls; errors: ErrorReporter },
    capture: ContentCapture | undefined,
  ) {
    this.#tracer = tracer;
    this.#options = options;
    this.#index = state.index;
    this.#open = state.open;
    this.#errors = state.errors;
    this.#capture = capture;
  }

  start(start: SpanStart): StartedSpan {
    const selfKey = start.invokeId !== '' ? start.invokeId : callKey(start.sessionId, start.callId);
    const ancestry = this.#index.ancestry(start.parentId, selfKey, this.#openSpanContext);
    let parent = ancestry.parent;
    if (parent === undefined && start.parentCallId !== '') {
      parent = this.#open.byCallId(start.sessionId, start.parentCallId)?.spanContext;
    }
    let parentContext: Context;
    if (parent !== undefined) {
      parentContext = trace.setSpanContext(ROOT_CONTEXT, parent);
    } else {
      const named =
        start.turnId === '' ? undefined : this.#agent?.containers.named(start.event, start.turnId);
      parentContext =
        named !== undefined
          ? trace.setSpanContext(ROOT_CONTEXT, named)
          : this.#fallback(start.event, start.activeContext, this.#newestContainer);
    }
    const startTime = hrTimeFromUnixNano(start.startUnixNano);
    const span = this.open({
      name: toolSpanName(start.name),
      startTime,
      attributes: start.attributes,
      parentContext,
      selfKey,
      traceKey: () => this.#traceKey(start.sessionId, selfKey, ancestry.rootId),
      links: start.links,
    });
    return { span, parentSpanId: trace.getSpanContext(parentContext)?.spanId ?? '', startTime };
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
   * Connects the agent around the tool calls: the agent spans that hold work without a causal
   * ancestor span, open agent spans for causal walks, declared tool descriptions, and the
   * session an event without one belongs to.
   */
  attachAgent(agent: AgentLookups): void {
    this.#agent = agent;
  }

  /**
   * The parent of a span whose event has no causal ancestor span: a container chosen by an
   * explicit id (`explicit()`, a turn named by the payload) first, then the `parentContext` hook
   * or the context active at dispatch when it holds a span, then `heuristic()` (the newest open
   * turn of the session), else none.
   */
  fallbackContext(
    event: BusEvent,
    activeContext: Context,
    explicit: () => SpanContext | undefined,
    heuristic: () => SpanContext | undefined,
  ): Context {
    const chosen = explicit();
    if (chosen !== undefined) return trace.setSpanContext(ROOT_CONTEXT, chosen);
    return this.#fallback(event, activeContext, heuristic);
  }

  /** The id the ancestor walk starts from and the span it finds, for agent spans. */
  ancestry(parentId: string, selfKey: string): CausalAncestry {
    return this.#index.ancestry(parentId, selfKey, this.#openSpanContext);
  }

  /** The key a root span's trace id is derived from, per `traceBy`. */
  traceKeyOf(sessionId: string, selfKey: string, rootId: string): string {
    return this.#traceKey(sessionId, selfKey, rootId);
  }

  /** The attributes of a span started by its `tool.invoke`. */
  invokeAttributes(event: BusEvent, invokeId: string, fields: InvokeFields): Attributes {
    const attributes = this.commonAttributes(event, fields.callId, fields.name);
    const causation = event.causation;
    if (invokeId !== '') attributes[ATTR_EVENT_ID] = invokeId;
    if (causation.parentId !== '') attributes[ATTR_EVENT_PARENT_ID] = causation.parentId;
    attributes[ATTR_EVENT_SEQUENCE] = causation.sequence;
    if (event.source !== undefined && event.source !== '') {
      attributes[ATTR_EVENT_SOURCE] = event.source;
    }
    if (fields.turnId !== '') attributes[ATTR_TURN_ID] = fields.turnId;
    if (fields.parentCallId !== '') attributes[ATTR_PARENT_CALL_ID] = fields.parentCallId;
    const description =
      fields.description !== ''
        ? fields.description
        : (this.#agent?.describe(causation.sessionId, fields.name) ?? '');
    if (description !== '') attributes[ATTR_GEN_AI_TOOL_DESCRIPTION] = description;
    if (this.#capture !== undefined && fields.arguments !== undefined) {
      const text = this.#capture.text(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, fields.arguments);
      if (text !== undefined) attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = text;
    }
    return attributes;
  }

  /**
   * How to start the span of a call whose invoke never came, from its held events (in time
   * order): named after the tool the events name, starting at the first one. Events held under
   * the invoke id they point at give the span the id that invoke would have given it.
   */
  orphanStart(heldKey: string, events: BusEvent[], activeContext: Context): SpanStart | undefined {
    const first = events[0];
    if (first === undefined) return undefined;
    const fromResult = first.type === TOOL_RESULT ? readResult(first.payload) : undefined;
    const result = events.find((event) => event.type === TOOL_RESULT);
    const name =
      (fromResult?.name ?? streamToolName(first.payload)) ||
      (result === undefined ? '' : readResult(result.payload).name);
    const callId = fromResult?.callId ?? streamCallId(first.payload);
    const { sessionId, parentId } = first.causation;
    const attributes = this.commonAttributes(first, callId, name);
    const payloadTurnId = (first.payload as { turn_id?: unknown } | null | undefined)?.turn_id;
    const turnId =
      typeof payloadTurnId === 'string'
        ? payloadTurnId
        : fromResult !== undefined
          ? fromResult.turnId
          : '';
    if (turnId !== '') attributes[ATTR_TURN_ID] = turnId;
    const keyedByInvoke = heldKey !== '' && heldKey === parentId;
    return {
      name,
      invokeId: keyedByInvoke ? heldKey : '',
      callId,
      sessionId,
      parentId: keyedByInvoke ? '' : parentId,
      parentCallId: '',
      startUnixNano: first.timeUnixNano,
      attributes,
      event: first,
      activeContext,
      turnId,
    };
  }

  /** The attributes every tool span has, from whatever event started it. */
  commonAttributes(event: BusEvent, callId: string, name: string): Attributes {
    const causation = event.causation;
    const agentName = this.#options.agentName || causation.agentId;
    const attributes = toolCallAttributes(
      name,
      callId,
      this.#agent?.sessionOf(event) ?? causation.sessionId,
      causation.agentId,
      agentName,
    );
    attributes[ATTR_DEPTH] = causation.depth;
    return attributes;
  }

  readonly #openSpanContext = (id: string): SpanContext | undefined =>
    this.#open.byInvokeId(id)?.spanContext ?? this.#agent?.openSpanContext(id);

  /** The newest open agent span holding `event`'s work, if any (no closure per call). */
  readonly #newestContainer = (event: BusEvent): SpanContext | undefined =>
    this.#agent?.containers.newest(event);

  #fallback(
    event: BusEvent,
    activeContext: Context,
    heuristic: (event: BusEvent) => SpanContext | undefined,
  ): Context {
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

  #traceKey(sessionId: string, selfKey: string, rootId: string): string {
    return traceKey(this.#options.traceBy, sessionId, selfKey, rootId);
  }
}
