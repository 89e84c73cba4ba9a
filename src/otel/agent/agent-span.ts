import type { Attributes, HrTime, Span, SpanContext } from '@opentelemetry/api';
import type { ScopeRunner } from '../../bus/index.js';
import type { AttributeTarget } from '../attribute-target.js';
import { BusEventBudget } from '../bus-event-budget.js';
import { hrTimeFromUnixNano, hrTimeNear } from '../hr-time.js';
import { spanRunner } from '../span-runner.js';
import type { ContainerSpan } from '../tracked-span.js';

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
  /** What the span's instruments are recorded with. */
  readonly agentName: string;
  /** The model a model call asked for (`''` for other kinds). */
  readonly requestModel: string;
}

/**
 * One open span of the agent around the tool calls: a session root, a turn, a model call or a
 * sub-agent. Keeps what its end needs (latest time seen inside it or its children, streamed
 * chunks, what its instruments record) and counts the other bus events it carries as span
 * events, bounded like stream events. Its state changes only through its methods; it ends once.
 */
export class AgentSpan implements AgentSpanInit, ContainerSpan {
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
  readonly agentName: string;
  readonly requestModel: string;
  readonly #startHrTime: HrTime;
  #lastUnixNano: bigint;
  #lastActivity: number;
  #ended = false;
  #openChildren = 0;
  #chunks = 0;
  #firstChunkUnixNano: bigint | undefined;
  #responseModel = '';
  #inputTokens: number | undefined;
  #outputTokens: number | undefined;
  #errorType = '';
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
    this.agentName = init.agentName;
    this.requestModel = init.requestModel;
    this.#startHrTime = hrTimeFromUnixNano(init.startUnixNano);
    this.#lastUnixNano = init.startUnixNano;
    this.#lastActivity = now;
  }

  /** Latest time seen in the span or its children: where an unfinished span ends. */
  get lastUnixNano(): bigint {
    return this.#lastUnixNano;
  }

  /** Subscriber clock (ms) of its latest activity, for the idle timeout. */
  get lastActivity(): number {
    return this.#lastActivity;
  }

  get ended(): boolean {
    return this.#ended;
  }

  get hasOpenChildren(): boolean {
    return this.#openChildren > 0;
  }

  /** `llm.stream.chunk` events of a model call (or held on a turn for a chat not started yet). */
  get chunks(): number {
    return this.#chunks;
  }

  get firstChunkUnixNano(): bigint | undefined {
    return this.#firstChunkUnixNano;
  }

  get responseModel(): string {
    return this.#responseModel;
  }

  get inputTokens(): number | undefined {
    return this.#inputTokens;
  }

  get outputTokens(): number | undefined {
    return this.#outputTokens;
  }

  /** `error.type` the span ended with, `''` for success. */
  get errorType(): string {
    return this.#errorType;
  }

  claimEnd(): boolean {
    if (this.#ended) return false;
    this.#ended = true;
    return true;
  }

  /** The OpenTelemetry time of a bus timestamp of this span. */
  hrTime(unixNano: bigint): HrTime {
    return hrTimeNear(this.startUnixNano, this.#startHrTime, unixNano);
  }

  /** Notes an event in the span at `unixNano` (subscriber clock `now`). */
  touch(unixNano: bigint, now: number): void {
    if (unixNano > this.#lastUnixNano) this.#lastUnixNano = unixNano;
    this.#lastActivity = now;
  }

  childStarted(unixNano: bigint, now: number): void {
    this.#openChildren += 1;
    this.touch(unixNano, now);
  }

  childEnded(unixNano: bigint, now: number): void {
    this.#openChildren -= 1;
    this.touch(unixNano, now);
  }

  /** Counts an `llm.stream.chunk` at `unixNano`. */
  addChunk(unixNano: bigint, now: number): void {
    this.#chunks += 1;
    if (this.#firstChunkUnixNano === undefined || unixNano < this.#firstChunkUnixNano) {
      this.#firstChunkUnixNano = unixNano;
    }
    this.touch(unixNano, now);
  }

  /** Takes over the chunks `holder` (a turn) kept for this model call before it started. */
  takeChunksFrom(holder: AgentSpan): void {
    this.#chunks = holder.#chunks;
    this.#firstChunkUnixNano = holder.#firstChunkUnixNano;
    holder.#chunks = 0;
    holder.#firstChunkUnixNano = undefined;
  }

  /** Keeps what a model call's answer tells its instruments. */
  recordResponse(model: string, inputTokens?: number, outputTokens?: number): void {
    this.#responseModel = model;
    this.#inputTokens = inputTokens;
    this.#outputTokens = outputTokens;
  }

  /** Records the `error.type` the span ends with. */
  fail(errorType: string): void {
    this.#errorType = errorType;
  }

  /** Adds a span event for another bus event, within the span's {@link BusEventBudget}. */
  addBusEvent(name: string, attributes: Attributes, unixNano: bigint, max: number): boolean {
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
