import { trace } from '@opentelemetry/api';
import type { Attributes, AttributeValue, Context, HrTime, Link, Span } from '@opentelemetry/api';
import type { BusEvent } from '../../bus/index.js';
import { TOOL_INVOKE, TOOL_RESULT } from '../../events/index.js';
import type { AgentView } from '../agent-view.js';
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
} from '../attribute-names.js';
import { BorrowedSpan, executingSpan } from '../borrowed-span.js';
import { hrTimeFromUnixNano } from '../hr-time.js';
import type { SpanCore } from '../span-core.js';
import { callKey } from '../span-keys.js';
import type { OpenCalls } from './open-calls.js';
import { writeToolAttributes } from './tool-attributes.js';
import {
  readResult,
  streamCallId,
  streamToolName,
  streamTurnId,
  type InvokeFields,
} from './tool-payloads.js';

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

/**
 * Starts tool spans: finds the parent (nearest causal ancestor span, else the parent call id,
 * else the turn the payload names, else the `parentContext` hook or the context active at
 * dispatch, else the newest open turn of the session) and builds the span's attributes.
 */
export class ToolSpanStarter {
  readonly #core: SpanCore;
  readonly #agent: AgentView;
  readonly #open: OpenCalls;

  constructor(core: SpanCore, agent: AgentView, open: OpenCalls) {
    this.#core = core;
    this.#agent = agent;
    this.#open = open;
  }

  start(start: SpanStart): StartedSpan {
    const borrowed = this.#borrow(start);
    if (borrowed !== undefined) return borrowed;
    const opener = this.#core.opener;
    const selfKey = start.invokeId !== '' ? start.invokeId : callKey(start.sessionId, start.callId);
    const ancestry = opener.ancestry(start.parentId, selfKey);
    const parent =
      ancestry.parent ??
      (start.parentCallId === ''
        ? undefined
        : this.#open.byCallId(start.sessionId, start.parentCallId)?.spanContext) ??
      (start.turnId === '' ? undefined : this.#agent.namedTurn(start.event, start.turnId));
    const parentContext = opener.contextFor(
      parent,
      start.event,
      start.activeContext,
      this.#agent.newestContainer,
    );
    const startTime = hrTimeFromUnixNano(start.startUnixNano);
    const span = opener.open({
      name: toolSpanName(start.name),
      startTime,
      attributes: start.attributes,
      parentContext,
      selfKey,
      traceKey: () => opener.traceKey(start.sessionId, selfKey, ancestry.rootId),
      links: start.links,
    });
    return { span, parentSpanId: trace.getSpanContext(parentContext)?.spanId ?? '', startTime };
  }

  /**
   * A call whose `tool.invoke` is dispatched inside the span that executes it already (the AI
   * SDK 7's own `execute_tool` span, with its OpenTelemetry integration registered): that span,
   * lent to the tracer, so the call has one span. Not with a `parentContext` hook, which asks
   * for spans placed by it.
   */
  #borrow(start: SpanStart): StartedSpan | undefined {
    if (start.event.type !== TOOL_INVOKE || this.#core.options.parentContext !== undefined) {
      return undefined;
    }
    const owner = executingSpan(start.activeContext, start.callId);
    if (owner === undefined) return undefined;
    const span = new BorrowedSpan(owner);
    span.setAttributes(start.attributes);
    return { span, parentSpanId: '', startTime: hrTimeFromUnixNano(start.startUnixNano) };
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
        : (this.#agent.describe(causation.sessionId, fields.name) ?? '');
    if (description !== '') attributes[ATTR_GEN_AI_TOOL_DESCRIPTION] = description;
    if (this.#core.capture !== undefined && fields.arguments !== undefined) {
      const text = this.#core.capture.text(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, fields.arguments);
      if (text !== undefined) attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = text;
    }
    if (fields.attributes !== undefined) {
      const into = {
        setAttribute: (key: string, value: AttributeValue) => (attributes[key] = value),
      };
      writeToolAttributes(into, fields.attributes, attributes);
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
    const turnId = streamTurnId(first.payload) ?? fromResult?.turnId ?? '';
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
    const agentName = this.#core.options.agentName || causation.agentId;
    const attributes = toolCallAttributes(
      name,
      callId,
      this.#agent.sessionOf(event),
      causation.agentId,
      agentName,
    );
    attributes[ATTR_DEPTH] = causation.depth;
    return attributes;
  }
}
