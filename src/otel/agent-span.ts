import {
  context as contextApi,
  trace,
  type Attributes,
  type Context,
  type HrTime,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import type { ScopeRunner } from '../bus/index.js';
import type { AttributeTarget } from './attribute-target.js';
import { BusEventBudget } from './bus-event-budget.js';
import { hrTimeFromUnixNano, hrTimeNear } from './hr-time.js';

/** What an agent span stands for. */
export type AgentSpanKind = 'session' | 'turn' | 'chat' | 'subagent';

/** How an {@link AgentSpan} is identified and placed, fixed when it starts. */
export interface AgentSpanInit {
  readonly kind: AgentSpanKind;
  readonly sessionId: string;
  readonly agentId: string;
  readonly depth: number;
  /** Turn id, request id, spawn id or session id; `''` when the events carry none. */
  readonly key: string;
  /** Stable id of the event that started it; `''` when it has none. */
  readonly startEventId: string;
  /** Causal parent of that event: where walks from its end event continue. */
  readonly parentLink: string;
  /** Span id of its parent span, `''` for a root: whose open child it is. */
  readonly parentSpanId: string;
  readonly startUnixNano: bigint;
}

/**
 * One open span of the agent around the tool calls: a session root, a turn, a model call or a
 * sub-agent. Keeps what its end needs (latest time seen inside it, streamed chunks) and counts
 * the other bus events it carries as span events, bounded like stream events.
 */
export class AgentSpan implements AgentSpanInit {
  readonly span: Span;
  readonly spanContext: SpanContext;
  readonly kind: AgentSpanKind;
  readonly sessionId: string;
  readonly agentId: string;
  readonly depth: number;
  readonly key: string;
  readonly startEventId: string;
  readonly parentLink: string;
  readonly parentSpanId: string;
  readonly startUnixNano: bigint;
  readonly #startHrTime: HrTime;
  /** Latest time seen in the span or its children: where an unfinished span ends. */
  lastUnixNano: bigint;
  /** Subscriber clock (ms) of its latest activity, for the idle timeout. */
  lastActivity: number;
  ended = false;
  /** `llm.stream.chunk` events of a model call. */
  chunks = 0;
  firstChunkUnixNano: bigint | undefined;
  /** A model call ended by `llm.stream.end` whose `llm.response` may still come. */
  awaitingResponse = false;
  /** The span's name (`invoke_agent planner`, `chat gpt-4o`), for a snapshot of it. */
  name = '';
  /** What the span's instruments are recorded with. */
  agentName = '';
  requestModel = '';
  responseModel = '';
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  /** `error.type` the span ended with, `''` for success. */
  errorType = '';
  readonly #busEvents = new BusEventBudget();
  #runner: ScopeRunner | undefined;

  constructor(span: Span, init: AgentSpanInit, now: number) {
    this.span = span;
    this.spanContext = span.spanContext();
    this.kind = init.kind;
    this.sessionId = init.sessionId;
    this.agentId = init.agentId;
    this.depth = init.depth;
    this.key = init.key;
    this.startEventId = init.startEventId;
    this.parentLink = init.parentLink;
    this.parentSpanId = init.parentSpanId;
    this.startUnixNano = init.startUnixNano;
    this.#startHrTime = hrTimeFromUnixNano(init.startUnixNano);
    this.lastUnixNano = init.startUnixNano;
    this.lastActivity = now;
  }

  /** The OpenTelemetry time of a bus timestamp of this span. */
  hrTime(unixNano: bigint): HrTime {
    return hrTimeNear(this.startUnixNano, this.#startHrTime, unixNano);
  }

  /** Notes an event in the span (or a child's start or end) at `unixNano`. */
  touch(unixNano: bigint, now: number): void {
    if (unixNano > this.lastUnixNano) this.lastUnixNano = unixNano;
    this.lastActivity = now;
  }

  /**
   * Adds a span event for another bus event, within the span's {@link BusEventBudget}. The
   * event is the span's latest one too, kept or not: a model call inferred later starts there
   * (after a `plan.result`, not at the start of the turn that planned).
   */
  addBusEvent(name: string, attributes: Attributes, unixNano: bigint, max: number): boolean {
    if (unixNano > this.lastUnixNano) this.lastUnixNano = unixNano;
    return this.#busEvents.add(this.span, name, attributes, this.hrTime(unixNano), max);
  }

  /** How many other bus events became span events or were only counted, when any came. */
  eventAttributes(target: AttributeTarget): void {
    this.#busEvents.summarize(target);
  }

  /** Runs handler code with this span active, so spans it starts are children of it. */
  get runner(): ScopeRunner {
    return (this.#runner ??= spanRunner(this.span));
  }
}

/**
 * A {@link ScopeRunner} that makes `span` the active span around the code it runs. The context
 * is made once, from the one active when first used: every handler of one dispatch runs in the
 * same context, and later dispatches of the same start event are duplicates.
 */
export function spanRunner(span: Span): ScopeRunner {
  let spanContext: Context | undefined;
  return <A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R =>
    contextApi.with(
      (spanContext ??= trace.setSpan(contextApi.active(), span)),
      fn,
      undefined,
      ...args,
    );
}
