import type { Link, SpanContext } from '@opentelemetry/api';
import type { BusEvent } from '../../bus/index.js';
import { LLM_RESPONSE, LLM_STREAM_END } from '../../events/index.js';
import {
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_LLM_REQUEST_ID,
  ATTR_LLM_ROLE,
  ATTR_START_INFERRED,
  ATTR_TURN_ID,
  CHAT,
  chatSpanName,
} from '../attribute-names.js';
import { GenerationalMap } from '../generational-map.js';
import type { ResolvedOptions } from '../options.js';
import { callKey, toolDescriptionKey } from '../span-keys.js';
import type { AgentCounts } from './agent-counts.js';
import { readLlm, type LlmFields } from './agent-fields.js';
import type { AgentSessions } from './agent-sessions.js';
import { AgentSpan } from './agent-span.js';
import type { AgentSpans } from './agent-spans.js';
import { chatByRequest, containerFor, namedTurn, type SessionState } from './session-state.js';

/** Model calls ended by `llm.stream.end` a session remembers, waiting for their `llm.response`. */
const MAX_STREAM_ENDED = 8;

/**
 * The model calls of the agent: a span `chat {model}` from `llm.request` to `llm.response`,
 * `llm.stream.end` or `llm.error`, with its streamed chunks. An answer whose request never came
 * starts its span at the previous event of its turn (marked `tooltrace.start_inferred`). It
 * remembers which model call asked for which tool call (the tool span links to it) and the
 * tool descriptions a request declared.
 */
export class ModelCalls {
  readonly #options: ResolvedOptions;
  readonly #spans: AgentSpans;
  readonly #sessions: AgentSessions;
  readonly #counts: AgentCounts;
  /** The model call whose answer asked for a tool call, by session and tool call id. */
  readonly #askedBy: GenerationalMap<SpanContext>;
  /** Tool descriptions an `llm.request` declared, by session and tool name. */
  readonly #descriptions = new GenerationalMap<string>(1024);

  constructor(
    options: ResolvedOptions,
    spans: AgentSpans,
    sessions: AgentSessions,
    counts: AgentCounts,
  ) {
    this.#options = options;
    this.#spans = spans;
    this.#sessions = sessions;
    this.#counts = counts;
    this.#askedBy = new GenerationalMap(options.maxRememberedEvents);
  }

  /** The description an `llm.request` declared for `toolName` in the session, if any. */
  describe(sessionId: string, toolName: string): string | undefined {
    if (this.#descriptions.size === 0) return undefined;
    return this.#descriptions.get(toolDescriptionKey(sessionId, toolName));
  }

  /** A link to the model call whose answer asked for tool call `callId`, when known. */
  linksFor(sessionId: string, callId: string): Link[] | undefined {
    if (callId === '' || this.#askedBy.size === 0) return undefined;
    const chat = this.#askedBy.get(callKey(sessionId, callId));
    return chat === undefined ? undefined : [{ context: chat }];
  }

  /** `llm.request`: starts a model call. */
  onRequest(event: BusEvent, now: number): void {
    const session = this.#sessions.forEvent(event, now);
    const fields = readLlm(event.payload);
    const named = (): AgentSpan | undefined =>
      fields.requestId === '' ? undefined : chatByRequest(session, fields.requestId);
    if (this.#spans.isDuplicateStart(event, named)) return;
    for (const tool of fields.tools) {
      this.#descriptions.set(toolDescriptionKey(session.id, tool.name), tool.description);
    }
    this.#startChat(event, now, session, fields, event.timeUnixNano, false);
  }

  /** `llm.stream.chunk`: counted on its model call, or held on the turn for an inferred one. */
  onChunk(event: BusEvent, now: number): void {
    const session = this.#sessions.forEvent(event, now);
    const fields = readLlm(event.payload);
    // Chunks of an answer whose request was never seen wait on the turn for its inferred span.
    const chat = this.#chatOf(session, event, fields) ?? containerFor(session, event);
    if (chat === undefined) {
      this.#counts.busEventsUnattached += 1;
      return;
    }
    chat.addChunk(event.timeUnixNano, now);
  }

  /** `llm.response`, `llm.stream.end` or `llm.error`: ends the model call, or makes one. */
  onEnd(event: BusEvent, now: number): void {
    const session = this.#sessions.forEvent(event, now);
    const fields = readLlm(event.payload);
    let chat = this.#chatOf(session, event, fields);
    if (chat === undefined && event.type === LLM_RESPONSE) {
      const answered = this.#streamEndedChat(session, event, fields);
      if (answered !== undefined) {
        this.#counts.responsesAfterStreamEnd += 1;
        this.#rememberAsked(session, answered.spanContext, fields);
        this.#spans.rememberEnd(event, answered);
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
        chat.takeChunksFrom(container);
      }
    }
    this.#rememberAsked(session, chat.spanContext, fields);
    if (event.type === LLM_STREAM_END) {
      session.streamEnded.push(chat);
      if (session.streamEnded.length > MAX_STREAM_ENDED) session.streamEnded.shift();
    }
    this.#spans.endWith(chat, event, now, fields);
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
    const attributes = this.#spans.commonAttributes(event, session.id, CHAT, 'chat', agentName);
    if (fields.model !== '') attributes[ATTR_GEN_AI_REQUEST_MODEL] = fields.model;
    if (fields.role !== '') attributes[ATTR_LLM_ROLE] = fields.role;
    if (fields.requestId !== '') attributes[ATTR_LLM_REQUEST_ID] = fields.requestId;
    if (fields.turnId !== '') attributes[ATTR_TURN_ID] = fields.turnId;
    if (fields.maxTokens !== undefined) {
      attributes[ATTR_GEN_AI_REQUEST_MAX_TOKENS] = fields.maxTokens;
    }
    if (fields.temperature !== undefined) {
      attributes[ATTR_GEN_AI_REQUEST_TEMPERATURE] = fields.temperature;
    }
    if (inferred) attributes[ATTR_START_INFERRED] = true;
    const chat = this.#spans.start('chat', event, now, session, {
      agentName,
      key: fields.requestId,
      name: chatSpanName(fields.model),
      attributes,
      selfKey: '',
      startUnixNano,
      requestModel: fields.model,
      explicit: () => namedTurn(session, fields.turnId)?.spanContext,
      heuristic: () => containerFor(session, event)?.spanContext,
    });
    session.chats.push(chat);
    return chat;
  }

  /** The open model call an `llm.*` event belongs to: by request id, causation, else its turn's. */
  #chatOf(session: SessionState, event: BusEvent, fields: LlmFields): AgentSpan | undefined {
    if (fields.requestId !== '') {
      const byRequest = chatByRequest(session, fields.requestId);
      if (byRequest !== undefined) return byRequest;
    }
    const target = this.#spans.targetOf(event);
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
}
