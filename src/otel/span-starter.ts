import {
  ROOT_CONTEXT,
  SpanKind,
  diag,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type Span,
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
  ATTR_PARENT_CALL_ID,
  ATTR_TURN_ID,
  toolCallAttributes,
  toolSpanName,
} from './attribute-names.js';
import type { CausalIndex } from './causal-index.js';
import type { ContentCapture } from './content-capture.js';
import type { ErrorReporter } from './error-reporter.js';
import { hrTimeFromUnixNano } from './hr-time.js';
import type { OpenCalls } from './open-calls.js';
import type { ResolvedOptions } from './options.js';
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

  start(start: SpanStart): Span {
    const selfKey = start.invokeId !== '' ? start.invokeId : callKey(start);
    const ancestry = this.#index.ancestry(start.parentId, selfKey, this.#openSpanContext);
    let parent = ancestry.parent;
    if (parent === undefined && start.parentCallId !== '') {
      parent = this.#open.byCallId(start.sessionId, start.parentCallId)?.spanContext;
    }
    const parentContext =
      parent !== undefined ? trace.setSpanContext(ROOT_CONTEXT, parent) : this.#fallback(start);
    const generator = this.#options.idGenerator;
    let spanId: string | undefined;
    if (generator !== undefined && selfKey !== '') {
      spanId = generator.spanIdFor(selfKey);
      const root = !isSpanContextValid(trace.getSpanContext(parentContext) ?? INVALID);
      const traceId = root
        ? generator.traceIdFor(this.#traceKey(start, selfKey, ancestry.rootId))
        : undefined;
      generator.queue(traceId, spanId);
    }
    let span: Span;
    try {
      span = this.#tracer.startSpan(
        toolSpanName(start.name),
        {
          kind: SpanKind.INTERNAL,
          startTime: hrTimeFromUnixNano(start.startUnixNano),
          attributes: start.attributes,
        },
        parentContext,
      );
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
    const turnId = (first.payload as { turn_id?: unknown } | null | undefined)?.turn_id;
    if (typeof turnId === 'string' && turnId !== '') attributes[ATTR_TURN_ID] = turnId;
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
    };
  }

  /** The attributes every tool span has, from whatever event started it. */
  commonAttributes(event: BusEvent, callId: string, name: string): Attributes {
    const causation = event.causation;
    const attributes = toolCallAttributes(name, callId, causation.sessionId, causation.agentId);
    attributes[ATTR_DEPTH] = causation.depth;
    return attributes;
  }

  readonly #openSpanContext = (id: string): SpanContext | undefined =>
    this.#open.byInvokeId(id)?.spanContext;

  #fallback(start: SpanStart): Context {
    const hook = this.#options.parentContext;
    if (hook === undefined) return start.activeContext;
    try {
      return hook(start.event) ?? ROOT_CONTEXT;
    } catch (error) {
      this.#errors.report('hook', error);
      return ROOT_CONTEXT;
    }
  }

  #traceKey(start: SpanStart, selfKey: string, rootId: string): string {
    const traceBy = this.#options.traceBy;
    if (traceBy === 'call') return `call\u0000${selfKey}`;
    if (traceBy === 'session' && start.sessionId !== '') return `session\u0000${start.sessionId}`;
    return `root\u0000${rootId}`;
  }
}

/** The key an ended call is remembered under when events lack ids: session and tool call id. */
export function callKey(call: { sessionId: string; callId: string }): string {
  return call.callId === '' ? '' : `${call.sessionId}\u0000${call.callId}`;
}
