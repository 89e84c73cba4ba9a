import {
  ROOT_CONTEXT,
  SpanStatusCode,
  context as contextApi,
  trace,
  type Attributes,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import type { BusEvent, ScopeRunner } from '../bus/index.js';
import {
  AGENT_TURN_END,
  AGENT_TURN_START,
  IO_SESSION_END,
  IO_SESSION_START,
  LLM_ERROR,
  LLM_REQUEST,
  LLM_RESPONSE,
  LLM_STREAM_CHUNK,
  LLM_STREAM_END,
  SUBAGENT_COMPLETE,
  SUBAGENT_ITERATION,
  SUBAGENT_SPAWN,
  SUBAGENT_STARTED,
} from '../events/index.js';
import {
  ATTR_DEPTH,
  ATTR_END_REASON,
  ATTR_ERROR_TYPE,
  ATTR_EVENT_ID,
  ATTR_EVENT_PAYLOAD,
  ATTR_EVENT_SOURCE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_LLM_REQUEST_ID,
  ATTR_LLM_ROLE,
  ATTR_SPAN_KIND,
  ATTR_START_INFERRED,
  ATTR_SUBAGENT_SPAWN_ID,
  ATTR_TURN_ID,
  ATTR_TURN_ITERATION,
  CHAT,
  ERROR_TYPE_ABANDONED,
  INVOKE_AGENT,
  SESSION,
  agentSpanName,
  chatSpanName,
  type EndReason,
} from './attribute-names.js';
import {
  readLlm,
  readSessionId,
  readSubagent,
  readTurn,
  type LlmFields,
  type SubagentFields,
} from './agent-fields.js';
import { applyLlmOutcome, applySubagentOutcome } from './agent-outcome.js';
import {
  chatByRequest,
  containerFor,
  forgetSpan,
  isEmpty,
  isEmptyButPending,
  namedTurn,
  newSession,
  newestTurn,
  subagentBySpawn,
  subagentFor,
  type SessionState,
} from './agent-session.js';
import { AgentSpan, type AgentSpanKind } from './agent-span.js';
import type { AgentMetrics } from './agent-metrics.js';
import type { CausalIndex } from './causal-index.js';
import type { ContentCapture } from './content-capture.js';
import type { ErrorReporter } from './error-reporter.js';
import { GenerationalMap } from './generational-map.js';
import { hrTimeFromUnixNano } from './hr-time.js';
import type { ResolvedOptions } from './options.js';
import { agentSpanKey, callKey, sessionRootKey, toolDescriptionKey } from './span-keys.js';
import type { Containers, SpanStarter } from './span-starter.js';

/** Other bus events a session keeps while no span of it is open yet (an `io.input` before its turn). */
const MAX_PENDING = 32;
/** Model calls ended by `llm.stream.end` a session remembers, waiting for their `llm.response`. */
const MAX_STREAM_ENDED = 8;
/** Longest sub-agent title kept in a span name. */
const MAX_TITLE = 64;

/** Something other bus events can be recorded on: an open tool call or agent span. */
export interface BusEventTarget {
  readonly spanContext: SpanContext;
  addBusEvent(name: string, attributes: Attributes, unixNano: bigint, max: number): boolean;
}

/** Counters of the agent spans, part of `ToolCallTracingStats`. */
export interface AgentTracingStats {
  /** Turn, model-call, sub-agent and session spans open now. */
  openSpans: number;
  spansStarted: number;
  /** Agent spans ended, by why. */
  spansEnded: Record<EndReason, number>;
  /** Model-call spans whose start was inferred (an `llm.response` without its `llm.request`). */
  inferredStarts: number;
  /** `llm.response` events that answered a model call `llm.stream.end` had already ended. */
  responsesAfterStreamEnd: number;
  /** Other bus events kept as span events. */
  busEventsRecorded: number;
  /** Other bus events only counted on their span (past `maxStreamEvents`). */
  busEventsCoalesced: number;
  /** Other bus events with no open span to go on (before any turn, after every end). */
  busEventsUnattached: number;
  /** Agent events seen twice (same start event id, same open turn, request or spawn id). */
  duplicateEvents: number;
  /** End events (`agent.turn.end`, `subagent.complete`) whose span was not open. */
  unpairedEvents: number;
}

/** What the agent tracer shares with the tool-call tracer that owns it. */
export interface AgentTracerDeps {
  readonly options: ResolvedOptions;
  readonly metrics: AgentMetrics;
  readonly starter: SpanStarter;
  readonly index: CausalIndex;
  readonly errors: ErrorReporter;
  readonly capture: ContentCapture | undefined;
  readonly idOf: (event: BusEvent) => string;
  /** The open tool call started by the `tool.invoke` event `id`, as an event target. */
  readonly openCall: (id: string) => BusEventTarget | undefined;
  /** Cuts and redacts an error message (whatever the capture setting). */
  readonly filterMessage: (message: string) => string;
}

/**
 * Draws the agent around the tool calls, as the GenAI conventions do: a span `invoke_agent` per
 * turn (`agent.turn.start` … `agent.turn.end`), a span `chat {model}` per model call
 * (`llm.request` … `llm.response`, `llm.stream.end` or `llm.error`), a span `invoke_agent` per
 * sub-agent (`subagent.spawn` … `subagent.complete`), and with `traceBy: 'session'` a root span
 * per session. Every other event becomes a bounded span event on the innermost open span it
 * belongs to. Spans nest by causation first; events that carry none are placed by the turn id
 * they name, else in the newest open turn of their session (the same agent's first).
 */
export class AgentTracer {
  readonly #deps: AgentTracerDeps;
  readonly #options: ResolvedOptions;
  readonly #sessions = new Map<string, SessionState>();
  /** Open agent spans by span id, in start order (the first is the oldest, for eviction). */
  readonly #open = new Map<string, AgentSpan>();
  readonly #byStartId = new Map<string, AgentSpan>();
  /** The model call whose answer asked for a tool call, by session and tool call id. */
  readonly #askedBy: GenerationalMap<SpanContext>;
  /** Tool descriptions an `llm.request` declared, by session and tool name. */
  readonly #descriptions: GenerationalMap<string>;
  /** The session an event without one belongs to: the last one started on this bus. */
  #lastSession = '';
  readonly #counts: Omit<AgentTracingStats, 'openSpans' | 'spansEnded'> = {
    spansStarted: 0,
    inferredStarts: 0,
    responsesAfterStreamEnd: 0,
    busEventsRecorded: 0,
    busEventsCoalesced: 0,
    busEventsUnattached: 0,
    duplicateEvents: 0,
    unpairedEvents: 0,
  };
  readonly #ended: Record<EndReason, number> = { result: 0, abandoned: 0, evicted: 0, shutdown: 0 };

  constructor(deps: AgentTracerDeps) {
    this.#deps = deps;
    this.#options = deps.options;
    this.#askedBy = new GenerationalMap(deps.options.maxRememberedEvents);
    this.#descriptions = new GenerationalMap(1024);
  }

  stats(): AgentTracingStats {
    return { openSpans: this.#open.size, ...this.#counts, spansEnded: { ...this.#ended } };
  }

  get openCount(): number {
    return this.#open.size;
  }

  /** Handles an agent event; `false` for any other type (the caller records it as a bus event). */
  onEvent(event: BusEvent, now: number): boolean {
    switch (event.type) {
      case IO_SESSION_START:
        this.#sessionStart(event, now);
        return true;
      case IO_SESSION_END:
        this.#sessionEnd(event, now);
        return true;
      case AGENT_TURN_START:
        this.#turnStart(event, now);
        return true;
      case AGENT_TURN_END:
        this.#turnEnd(event, now);
        return true;
      case LLM_REQUEST:
        this.#llmRequest(event, now);
        return true;
      case LLM_RESPONSE:
      case LLM_STREAM_END:
      case LLM_ERROR:
        this.#llmEnd(event, now);
        return true;
      case LLM_STREAM_CHUNK:
        this.#llmChunk(event, now);
        return true;
      case SUBAGENT_SPAWN:
      case SUBAGENT_STARTED:
        this.#subagentStart(event, now);
        return true;
      case SUBAGENT_ITERATION:
        this.#subagentIteration(event, now);
        return true;
      case SUBAGENT_COMPLETE:
        this.#subagentComplete(event, now);
        return true;
      default:
        return false;
    }
  }

  /**
   * Records any other bus event as a span event on the innermost open span it belongs to: the
   * open tool call or agent span its causal chain reaches, else the newest open turn of its
   * session; before any span of the session is open it waits for the first one.
   */
  recordBusEvent(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    this.#place(session, event, this.#targetOf(event) ?? containerFor(session, event));
  }

  /** The scope a handler of `event` runs in: the span the event started, if any. */
  scopeFor(event: BusEvent): ScopeRunner | undefined {
    if (this.#open.size === 0) return undefined;
    const id = this.#deps.idOf(event);
    return id === '' ? undefined : this.#byStartId.get(id)?.runner;
  }

  /** The open agent span started by the event `id`, for causal walks. */
  readonly openSpanContext = (id: string): SpanContext | undefined =>
    this.#byStartId.get(id)?.spanContext;

  /** Where tool calls without a causal ancestor span go. */
  readonly containers: Containers = {
    named: (event, turnId) => {
      if (turnId === '' || this.#open.size === 0) return undefined;
      const session = this.#sessions.get(this.#sessionIdOf(event));
      return session === undefined ? undefined : namedTurn(session, turnId)?.spanContext;
    },
    newest: (event) => {
      if (this.#open.size === 0) return undefined;
      const session = this.#sessions.get(this.#sessionIdOf(event));
      return session === undefined ? undefined : containerFor(session, event)?.spanContext;
    },
  };

  /** The description an `llm.request` declared for `toolName` in the session, if any. */
  readonly describe = (sessionId: string, toolName: string): string | undefined =>
    this.#descriptions.size === 0
      ? undefined
      : this.#descriptions.get(toolDescriptionKey(sessionId, toolName));

  /** A link to the model call whose answer asked for tool call `callId`, when known. */
  linksFor(sessionId: string, callId: string): Link[] | undefined {
    if (callId === '' || this.#askedBy.size === 0) return undefined;
    const chat = this.#askedBy.get(callKey(sessionId, callId));
    return chat === undefined ? undefined : [{ context: chat }];
  }

  /** A span whose parent is `parentSpanId` started at `unixNano`: its parent is active. */
  childStarted(parentSpanId: string, unixNano: bigint, now: number): void {
    if (parentSpanId === '' || this.#open.size === 0) return;
    this.#open.get(parentSpanId)?.touch(unixNano, now);
  }

  /** Ends agent spans idle since `idleSince` (subscriber clock) that have no open child. */
  sweep(idleSince: number, busyParents: ReadonlySet<string>): void {
    const busy = new Set(busyParents);
    for (const agent of this.#open.values()) busy.add(agent.parentSpanId);
    for (const agent of [...this.#open.values()]) {
      if (agent.lastActivity <= idleSince && !busy.has(agent.spanContext.spanId)) {
        this.#endUnfinished(agent, 'abandoned');
      }
    }
    for (const session of this.#sessions.values()) {
      if (session.lastActivity > idleSince) continue;
      this.#counts.busEventsUnattached += session.pending.length;
      session.pending.length = 0;
      if (isEmpty(session) && session.id !== this.#lastSession) this.#sessions.delete(session.id);
    }
  }

  /** Ends every open agent span (newest first, so children end before parents), marked `shutdown`. */
  close(): void {
    for (const agent of [...this.#open.values()].reverse()) {
      this.#endUnfinished(agent, 'shutdown');
    }
    for (const session of this.#sessions.values()) {
      this.#counts.busEventsUnattached += session.pending.length;
      session.pending.length = 0;
    }
  }

  #sessionIdOf(event: BusEvent): string {
    const id = event.causation.sessionId;
    return id !== '' ? id : this.#lastSession;
  }

  /** The session `event` belongs to: its own, else the one last started on the bus. */
  readonly sessionOf = (event: BusEvent): string => this.#sessionIdOf(event);

  #session(id: string, now: number): SessionState {
    let session = this.#sessions.get(id);
    if (session === undefined) {
      if (this.#sessions.size >= this.#options.maxOpenSpans) this.#forgetOldestIdleSession();
      session = newSession(id, now);
      this.#sessions.set(id, session);
    } else {
      session.lastActivity = now;
    }
    return session;
  }

  /**
   * Bounds the sessions remembered: the oldest one with no open span is forgotten, its waiting
   * events counted as unattached. Sessions with open spans are bounded by `maxOpenSpans` anyway.
   */
  #forgetOldestIdleSession(): void {
    for (const session of this.#sessions.values()) {
      if (!isEmptyButPending(session) || session.id === this.#lastSession) continue;
      this.#counts.busEventsUnattached += session.pending.length;
      this.#sessions.delete(session.id);
      return;
    }
  }

  #sessionStart(event: BusEvent, now: number): void {
    const id = readSessionId(event.payload) || event.causation.sessionId;
    this.#lastSession = id;
    const session = this.#session(id, now);
    if (this.#options.traceBy !== 'session' || session.root !== undefined || id === '') return;
    this.#ensureRoot(session, event, now);
  }

  #ensureRoot(session: SessionState, event: BusEvent, now: number): AgentSpan {
    if (session.root !== undefined) return session.root;
    const attributes: Attributes = {
      [ATTR_GEN_AI_CONVERSATION_ID]: session.id,
      [ATTR_SPAN_KIND]: SESSION,
    };
    const root = this.#start('session', event, now, session, {
      agentName: '',
      key: session.id,
      name: session.id === '' ? SESSION : `${SESSION} ${session.id}`,
      attributes,
      selfKey: sessionRootKey(session.id),
      explicit: noSpan,
      heuristic: noSpan,
    });
    session.root = root;
    return root;
  }

  #sessionEnd(event: BusEvent, now: number): void {
    const id = readSessionId(event.payload) || this.#sessionIdOf(event);
    const session = this.#sessions.get(id);
    const root = session?.root;
    if (session === undefined || root === undefined) {
      if (session === undefined) return;
      session.lastActivity = now;
      this.#place(session, event, containerFor(session, event));
      return;
    }
    this.#record(root, event);
    this.#end(root, 'result', event.timeUnixNano, now);
  }

  #turnStart(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    if (this.#isDuplicateStart(event)) return;
    const fields = readTurn(event.payload);
    if (fields.turnId !== '' && namedTurn(session, fields.turnId) !== undefined) {
      this.#counts.duplicateEvents += 1;
      return;
    }
    if (this.#options.traceBy === 'session' && session.id !== '') {
      this.#ensureRoot(session, event, now);
    }
    const { agentId } = event.causation;
    const agentName = this.#options.agentName || agentId;
    const attributes = this.#commonAttributes(event, session.id, INVOKE_AGENT, 'turn', agentName);
    if (fields.turnId !== '') attributes[ATTR_TURN_ID] = fields.turnId;
    if (fields.iteration !== undefined) attributes[ATTR_TURN_ITERATION] = fields.iteration;
    const turn = this.#start('turn', event, now, session, {
      agentName,
      key: fields.turnId,
      name: agentSpanName(agentName),
      attributes,
      selfKey: '',
      explicit: () => (subagentFor(session, event) ?? session.root)?.spanContext ?? undefined,
      heuristic: noSpan,
    });
    session.turns.push(turn);
  }

  #turnEnd(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    const { turnId } = readTurn(event.payload);
    const turn =
      (turnId !== '' ? namedTurn(session, turnId) : undefined) ?? newestTurn(session, event);
    if (turn === undefined) {
      this.#counts.unpairedEvents += 1;
      return;
    }
    this.#endWith(turn, event, now, undefined);
  }

  #llmRequest(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    if (this.#isDuplicateStart(event)) return;
    const fields = readLlm(event.payload);
    if (fields.requestId !== '' && chatByRequest(session, fields.requestId) !== undefined) {
      this.#counts.duplicateEvents += 1;
      return;
    }
    for (const tool of fields.tools) {
      this.#descriptions.set(toolDescriptionKey(session.id, tool.name), tool.description);
    }
    this.#startChat(event, now, session, fields, event.timeUnixNano, false);
  }

  #startChat(
    event: BusEvent,
    now: number,
    session: SessionState,
    fields: LlmFields,
    startUnixNano: bigint,
    inferred: boolean,
  ): AgentSpan {
    const agentName = this.#options.agentName || event.causation.agentId;
    const attributes = this.#commonAttributes(event, session.id, CHAT, 'chat', agentName);
    if (fields.model !== '') attributes[ATTR_GEN_AI_REQUEST_MODEL] = fields.model;
    if (fields.role !== '') attributes[ATTR_LLM_ROLE] = fields.role;
    if (fields.requestId !== '') attributes[ATTR_LLM_REQUEST_ID] = fields.requestId;
    if (fields.turnId !== '') attributes[ATTR_TURN_ID] = fields.turnId;
    if (fields.maxTokens !== undefined)
      attributes[ATTR_GEN_AI_REQUEST_MAX_TOKENS] = fields.maxTokens;
    if (fields.temperature !== undefined) {
      attributes[ATTR_GEN_AI_REQUEST_TEMPERATURE] = fields.temperature;
    }
    if (inferred) attributes[ATTR_START_INFERRED] = true;
    const chat = this.#start('chat', event, now, session, {
      agentName,
      key: fields.requestId,
      name: chatSpanName(fields.model),
      attributes,
      selfKey: '',
      startUnixNano,
      explicit: () => namedTurn(session, fields.turnId)?.spanContext,
      heuristic: () => containerFor(session, event)?.spanContext,
    });
    chat.requestModel = fields.model;
    session.chats.push(chat);
    return chat;
  }

  /** The open model call an `llm.*` event belongs to: by request id, causation, else its turn's. */
  #chatOf(session: SessionState, event: BusEvent, fields: LlmFields): AgentSpan | undefined {
    if (fields.requestId !== '') {
      const byRequest = chatByRequest(session, fields.requestId);
      if (byRequest !== undefined) return byRequest;
    }
    const target = this.#targetOf(event);
    if (target instanceof AgentSpan && target.kind === 'chat') return target;
    if (session.chats.length === 0) return undefined;
    const turn =
      (fields.turnId !== '' ? namedTurn(session, fields.turnId) : undefined) ??
      containerFor(session, event);
    const parentSpanId = turn?.spanContext.spanId ?? '';
    // The oldest open call of that turn (answers come in the order the questions went out); an
    // answer naming a request id we never saw only takes a call that had none.
    return session.chats.find(
      (chat) => chat.parentSpanId === parentSpanId && (fields.requestId === '' || chat.key === ''),
    );
  }

  #llmChunk(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    const fields = readLlm(event.payload);
    // Chunks of an answer whose request was never seen wait on the turn for its inferred span.
    const chat = this.#chatOf(session, event, fields) ?? containerFor(session, event);
    if (chat === undefined) {
      this.#counts.busEventsUnattached += 1;
      return;
    }
    chat.chunks += 1;
    if (chat.firstChunkUnixNano === undefined || event.timeUnixNano < chat.firstChunkUnixNano) {
      chat.firstChunkUnixNano = event.timeUnixNano;
    }
    chat.touch(event.timeUnixNano, now);
  }

  /** `llm.response`, `llm.stream.end` or `llm.error`: ends the model call, or makes one. */
  #llmEnd(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    const fields = readLlm(event.payload);
    let chat = this.#chatOf(session, event, fields);
    if (chat === undefined && event.type === LLM_RESPONSE) {
      const answered = this.#streamEndedChat(session, event, fields);
      if (answered !== undefined) {
        this.#counts.responsesAfterStreamEnd += 1;
        this.#rememberAsked(session, answered.spanContext, fields);
        this.#rememberEnd(event, answered);
        return;
      }
    }
    if (chat === undefined) {
      const container = containerFor(session, event);
      const start =
        container !== undefined && container.lastUnixNano < event.timeUnixNano
          ? container.lastUnixNano
          : event.timeUnixNano;
      chat = this.#startChat(event, now, session, fields, start, true);
      this.#counts.inferredStarts += 1;
      if (container !== undefined && container.kind !== 'chat' && container.chunks > 0) {
        // Chunks that arrived before this answer, held on the turn.
        chat.chunks = container.chunks;
        chat.firstChunkUnixNano = container.firstChunkUnixNano;
        container.chunks = 0;
        container.firstChunkUnixNano = undefined;
      }
    }
    this.#rememberAsked(session, chat.spanContext, fields);
    if (event.type === LLM_STREAM_END) {
      chat.awaitingResponse = true;
      session.streamEnded.push(chat);
      if (session.streamEnded.length > MAX_STREAM_ENDED) session.streamEnded.shift();
    }
    this.#endWith(chat, event, now, fields);
  }

  /** A model call `llm.stream.end` ended that this `llm.response` answers, if any. */
  #streamEndedChat(
    session: SessionState,
    event: BusEvent,
    fields: LlmFields,
  ): AgentSpan | undefined {
    const list = session.streamEnded;
    let index = -1;
    if (fields.requestId !== '') index = list.findIndex((chat) => chat.key === fields.requestId);
    if (index === -1) {
      const turn = containerFor(session, event)?.spanContext.spanId ?? '';
      index = list.findIndex((chat) => chat.parentSpanId === turn);
    }
    if (index === -1) return undefined;
    const [chat] = list.splice(index, 1);
    return chat;
  }

  #rememberAsked(session: SessionState, chat: SpanContext, fields: LlmFields): void {
    for (const callId of fields.toolCallIds) {
      this.#askedBy.set(callKey(session.id, callId), chat);
    }
  }

  #subagentStart(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    const fields = readSubagent(event.payload);
    const open = fields.spawnId === '' ? undefined : subagentBySpawn(session, fields.spawnId);
    if (open !== undefined) {
      // `subagent.started` after its `subagent.spawn`: a mark on the span it opened.
      this.#record(open, event);
      return;
    }
    if (this.#isDuplicateStart(event)) return;
    const title =
      fields.title.length > MAX_TITLE ? `${fields.title.slice(0, MAX_TITLE - 1)}…` : fields.title;
    const attributes = this.#commonAttributes(event, session.id, INVOKE_AGENT, 'subagent', title);
    if (fields.spawnId !== '') attributes[ATTR_SUBAGENT_SPAWN_ID] = fields.spawnId;
    if (fields.parentTurnId !== '') attributes[ATTR_TURN_ID] = fields.parentTurnId;
    const subagent = this.#start('subagent', event, now, session, {
      agentName: title,
      key: fields.spawnId,
      name: agentSpanName(title),
      attributes,
      selfKey: '',
      explicit: () => namedTurn(session, fields.parentTurnId)?.spanContext,
      heuristic: () => containerFor(session, event)?.spanContext,
    });
    session.subagents.push(subagent);
  }

  #subagentIteration(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    const fields = readSubagent(event.payload);
    const subagent = this.#subagentOf(session, fields);
    if (subagent === undefined) {
      this.recordBusEvent(event, now);
      return;
    }
    subagent.touch(event.timeUnixNano, now);
    this.#record(subagent, event);
  }

  #subagentComplete(event: BusEvent, now: number): void {
    const session = this.#session(this.#sessionIdOf(event), now);
    const fields = readSubagent(event.payload);
    const subagent = this.#subagentOf(session, fields);
    if (subagent === undefined) {
      this.#counts.unpairedEvents += 1;
      return;
    }
    this.#endWith(subagent, event, now, fields);
  }

  #subagentOf(session: SessionState, fields: SubagentFields): AgentSpan | undefined {
    if (fields.spawnId !== '') return subagentBySpawn(session, fields.spawnId);
    return session.subagents.at(-1);
  }

  /** A start event whose id already started an open span: a duplicate. */
  #isDuplicateStart(event: BusEvent): boolean {
    const id = this.#deps.idOf(event);
    if (id === '' || !this.#byStartId.has(id)) return false;
    this.#counts.duplicateEvents += 1;
    return true;
  }

  #commonAttributes(
    event: BusEvent,
    sessionId: string,
    operation: string,
    kind: AgentSpanKind,
    agentName: string,
  ): Attributes {
    const causation = event.causation;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: operation,
      [ATTR_SPAN_KIND]: kind,
    };
    if (agentName !== '') attributes[ATTR_GEN_AI_AGENT_NAME] = agentName;
    if (causation.agentId !== '') attributes[ATTR_GEN_AI_AGENT_ID] = causation.agentId;
    if (sessionId !== '') attributes[ATTR_GEN_AI_CONVERSATION_ID] = sessionId;
    attributes[ATTR_DEPTH] = causation.depth;
    const id = this.#deps.idOf(event);
    if (id !== '') attributes[ATTR_EVENT_ID] = id;
    if (event.source !== undefined && event.source !== '')
      attributes[ATTR_EVENT_SOURCE] = event.source;
    return attributes;
  }

  #start(
    kind: AgentSpanKind,
    event: BusEvent,
    now: number,
    session: SessionState,
    how: {
      agentName: string;
      key: string;
      name: string;
      attributes: Attributes;
      /** Derived-id key when the event has no stable id of its own; `''` for the default. */
      selfKey: string;
      startUnixNano?: bigint;
      explicit: () => SpanContext | undefined;
      heuristic: () => SpanContext | undefined;
    },
  ): AgentSpan {
    const { starter } = this.#deps;
    const startId = this.#deps.idOf(event);
    const startUnixNano = how.startUnixNano ?? event.timeUnixNano;
    const selfKey =
      how.selfKey !== ''
        ? how.selfKey
        : startId !== ''
          ? startId
          : agentSpanKey(kind, session.id, how.key, event.timeUnixNano);
    const parentId = kind === 'session' ? '' : event.causation.parentId;
    const ancestry = starter.ancestry(parentId, selfKey);
    const parentContext =
      ancestry.parent !== undefined
        ? trace.setSpanContext(ROOT_CONTEXT, ancestry.parent)
        : starter.fallbackContext(event, contextApi.active(), how.explicit, how.heuristic);
    const oldest = this.#open.values().next().value;
    if (oldest !== undefined && this.#open.size >= this.#options.maxOpenSpans) {
      this.#endUnfinished(oldest, 'evicted');
    }
    const span = starter.open({
      name: how.name,
      startTime: hrTimeFromUnixNano(startUnixNano),
      attributes: how.attributes,
      parentContext,
      selfKey,
      traceKey: () => starter.traceKeyOf(session.id, selfKey, ancestry.rootId),
    });
    const parentSpanId = trace.getSpanContext(parentContext)?.spanId ?? '';
    const agent = new AgentSpan(
      span,
      {
        kind,
        sessionId: session.id,
        agentId: event.causation.agentId,
        depth: event.causation.depth,
        key: how.key,
        startEventId: kind === 'session' ? '' : startId,
        parentLink: parentId,
        parentSpanId,
        startUnixNano,
      },
      now,
    );
    agent.agentName = how.agentName;
    this.#open.set(agent.spanContext.spanId, agent);
    if (agent.startEventId !== '') this.#byStartId.set(agent.startEventId, agent);
    this.#counts.spansStarted += 1;
    this.childStarted(parentSpanId, startUnixNano, now);
    if (kind !== 'chat' && session.pending.length > 0) {
      for (const pending of session.pending.splice(0)) this.#record(agent, pending);
    }
    return agent;
  }

  /** Ends a span with the event that closes it: outcome from `fields`, status on failure. */
  #endWith(
    agent: AgentSpan,
    event: BusEvent,
    now: number,
    fields: LlmFields | SubagentFields | undefined,
  ): void {
    agent.touch(event.timeUnixNano, now);
    const filter = this.#deps.filterMessage;
    try {
      if (agent.kind === 'chat' && fields !== undefined && 'model' in fields) {
        applyLlmOutcome(agent, fields, event.type === LLM_ERROR, event.timeUnixNano, filter);
      } else if (agent.kind === 'subagent' && fields !== undefined && 'spawnId' in fields) {
        applySubagentOutcome(agent, fields, event.timeUnixNano, filter);
      }
    } catch (error) {
      this.#deps.errors.report('tracer', error);
    }
    this.#end(agent, 'result', event.timeUnixNano, now);
    this.#rememberEnd(event, agent);
  }

  /** Work the end event causes is the span's sibling: walks from it continue at its parent. */
  #rememberEnd(event: BusEvent, agent: AgentSpan): void {
    const id = this.#deps.idOf(event);
    if (id !== '') this.#deps.index.rememberEvent(id, agent.parentLink);
  }

  #endUnfinished(agent: AgentSpan, reason: EndReason): void {
    if (reason === 'abandoned') {
      agent.errorType = ERROR_TYPE_ABANDONED;
      try {
        agent.span.setAttribute(ATTR_ERROR_TYPE, ERROR_TYPE_ABANDONED);
        agent.span.setStatus({
          code: SpanStatusCode.ERROR,
          message: `no end event within ${this.#options.idleTimeoutMs} ms of the span's last activity`,
        });
      } catch (error) {
        this.#deps.errors.report('tracer', error);
      }
    }
    this.#end(agent, reason, agent.lastUnixNano, agent.lastActivity);
  }

  #end(agent: AgentSpan, reason: EndReason, endUnixNano: bigint, now: number): void {
    if (agent.ended) return;
    agent.ended = true;
    this.#open.delete(agent.spanContext.spanId);
    if (agent.startEventId !== '') {
      this.#byStartId.delete(agent.startEventId);
      this.#deps.index.rememberEndedCall(agent.startEventId, agent.spanContext);
    }
    const session = this.#sessions.get(agent.sessionId);
    if (session !== undefined) {
      forgetSpan(session, agent);
    }
    this.#ended[reason] += 1;
    try {
      agent.span.setAttribute(ATTR_END_REASON, reason);
      agent.eventAttributes(agent.span);
      const end = endUnixNano > agent.startUnixNano ? endUnixNano : agent.startUnixNano;
      agent.span.end(agent.hrTime(end));
      this.#measure(agent, reason, end);
    } catch (error) {
      this.#deps.errors.report('tracer', error);
    }
    this.childStarted(agent.parentSpanId, endUnixNano, now);
    const hook = this.#options.onSpanEnd;
    if (hook === undefined) return;
    try {
      hook(agent.span, reason);
    } catch (error) {
      this.#deps.errors.report('hook', error);
    }
  }

  #measure(agent: AgentSpan, reason: EndReason, endUnixNano: bigint): void {
    const { metrics } = this.#deps;
    if (agent.kind === 'chat') {
      metrics.chatEnded(
        {
          agentName: agent.agentName,
          requestModel: agent.requestModel,
          responseModel: agent.responseModel,
          startUnixNano: agent.startUnixNano,
          endUnixNano,
          errorType: agent.errorType,
          inputTokens: agent.inputTokens,
          outputTokens: agent.outputTokens,
        },
        reason,
      );
    } else if (agent.kind !== 'session') {
      const { agentName, startUnixNano, errorType } = agent;
      metrics.agentEnded(agentName, startUnixNano, endUnixNano, errorType, reason);
    }
  }

  /** The open tool call or agent span the event's causal chain reaches first, if any. */
  #targetOf(event: BusEvent): BusEventTarget | undefined {
    const parentId = event.causation.parentId;
    if (parentId === '') return undefined;
    let found: BusEventTarget | undefined;
    this.#deps.index.ancestry(parentId, '', (id) => {
      found = this.#deps.openCall(id) ?? this.#byStartId.get(id);
      return found?.spanContext;
    });
    return found;
  }

  /** Records `event` on `target`, or holds it for the session's first span (bounded). */
  #place(session: SessionState, event: BusEvent, target: BusEventTarget | undefined): void {
    if (target !== undefined) this.#record(target, event);
    else if (session.pending.length < MAX_PENDING) session.pending.push(event);
    else this.#counts.busEventsUnattached += 1;
  }

  #record(target: BusEventTarget, event: BusEvent): void {
    const attributes: Attributes = {};
    if (event.source !== undefined && event.source !== '')
      attributes[ATTR_EVENT_SOURCE] = event.source;
    const capture = this.#deps.capture;
    if (capture !== undefined && event.payload !== undefined) {
      const text = capture.text(ATTR_EVENT_PAYLOAD, event.payload);
      if (text !== undefined) attributes[ATTR_EVENT_PAYLOAD] = text;
    }
    if (
      target.addBusEvent(event.type, attributes, event.timeUnixNano, this.#options.maxStreamEvents)
    ) {
      this.#counts.busEventsRecorded += 1;
    } else {
      this.#counts.busEventsCoalesced += 1;
    }
  }
}

function noSpan(): undefined {
  return undefined;
}
