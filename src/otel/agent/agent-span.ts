import type { Span } from '@opentelemetry/api';
import type { AttributeTarget } from '../attribute-target.js';
import type { ContainerSpan } from '../container-span.js';
import { hrTimeFromUnixNano } from '../hr-time.js';
import { OpenSpan } from '../open-span.js';

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
  /** The span's name (`invoke_agent planner`, `chat gpt-4o`), for a snapshot of it. */
  readonly name: string;
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
export class AgentSpan extends OpenSpan implements AgentSpanInit, ContainerSpan {
  readonly kind: AgentSpanKind;
  readonly sessionId: string;
  readonly agentId: string;
  readonly depth: number;
  readonly key: string;
  readonly startEventId: string;
  readonly parentLink: string;
  readonly name: string;
  readonly agentName: string;
  readonly requestModel: string;
  #openChildren = 0;
  #chunks = 0;
  #firstChunkUnixNano: bigint | undefined;
  #responseModel = '';
  #inputTokens: number | undefined;
  #outputTokens: number | undefined;

  constructor(span: Span, init: AgentSpanInit, now: number) {
    super(span, init.parentSpanId, init.startUnixNano, hrTimeFromUnixNano(init.startUnixNano), now);
    this.kind = init.kind;
    this.sessionId = init.sessionId;
    this.agentId = init.agentId;
    this.depth = init.depth;
    this.key = init.key;
    this.startEventId = init.startEventId;
    this.parentLink = init.parentLink;
    this.name = init.name;
    this.agentName = init.agentName;
    this.requestModel = init.requestModel;
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

  /** How many other bus events became span events or were only counted, when any came. */
  eventAttributes(target: AttributeTarget): void {
    this.summarizeBusEvents(target);
  }
}
