import type { Link, SpanContext } from '@opentelemetry/api';
import type { BusEvent, ScopeRunner } from '../../bus/index.js';
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
} from '../../events/index.js';
import type { AgentView } from '../agent-view.js';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_SPAN_KIND,
  ATTR_SUBAGENT_SPAWN_ID,
  ATTR_TURN_ID,
  ATTR_TURN_ITERATION,
  INVOKE_AGENT,
  SESSION,
  agentSpanName,
} from '../attribute-names.js';
import type { SpanCore } from '../span-core.js';
import { sessionRootKey } from '../span-keys.js';
import type { AgentTracingStats } from '../tracing-stats.js';
import type { OpenSpan } from '../open-span.js';
import { newAgentCounts, type AgentCounts } from './agent-counts.js';
import { readSessionId, readSubagent, readTurn, type SubagentFields } from './agent-fields.js';
import { AgentSessions } from './agent-sessions.js';
import type { AgentSpan } from './agent-span.js';
import { AgentSpans } from './agent-spans.js';
import { ModelCalls } from './model-calls.js';
import {
  containerFor,
  namedTurn,
  newestTurn,
  subagentBySpawn,
  subagentFor,
  type SessionState,
} from './session-state.js';

/** Other bus events a session keeps while no span of it is open yet (an `io.input` before its turn). */
const MAX_PENDING = 32;
/** Longest sub-agent title kept in a span name. */
const MAX_TITLE = 64;
/** Vetoable events (`before:tool.result`) are announcements, not events of their own. */
const BEFORE_PREFIX = 'before:';

/**
 * Draws the agent around the tool calls, as the GenAI conventions do, on the span core: a span
 * `invoke_agent` per turn (`agent.turn.start` … `agent.turn.end`), a span `chat {model}` per
 * model call ({@link ModelCalls}), a span `invoke_agent` per sub-agent (`subagent.spawn` …
 * `subagent.complete`), and with `traceBy: 'session'` a root span per session. Every other event
 * becomes a bounded span event on the innermost open span it belongs to. Spans nest by causation
 * first; events that carry none are placed by the turn id they name, else in the newest open
 * turn of their session (the same agent's first). Tool calls ask it where they go
 * ({@link AgentView}).
 */
export class AgentTracer implements AgentView {
  readonly #core: SpanCore;
  readonly #counts: AgentCounts = newAgentCounts();
  readonly #sessions: AgentSessions;
  readonly #spans: AgentSpans;
  readonly #modelCalls: ModelCalls;

  constructor(core: SpanCore) {
    this.#core = core;
    this.#sessions = new AgentSessions(core.options.maxOpenSpans, this.#counts);
    this.#spans = new AgentSpans(core, this.#sessions, this.#counts);
    this.#modelCalls = new ModelCalls(core.options, this.#spans, this.#sessions, this.#counts);
  }

  stats(): AgentTracingStats {
    return { openSpans: this.#spans.size, ...this.#counts, spansEnded: this.#spans.endReasons() };
  }

  /**
   * Any bus event but a tool event: agent events start and end agent spans, any other event
   * becomes a span event where it belongs. Either way the event is remembered for causal walks.
   */
  onEvent(event: BusEvent): void {
    const core = this.#core;
    const id = core.idOf(event);
    // A vetoable `before:` event announces the real one, which is recorded when it comes.
    if (event.type.startsWith(BEFORE_PREFIX)) {
      if (id !== '') core.index.rememberEvent(id, event.causation.parentId);
      return;
    }
    const now = core.sweep.readClock();
    if (!this.#onAgentEvent(event, now)) {
      if (id !== '') core.index.rememberEvent(id, event.causation.parentId);
      this.#recordBusEvent(event, now);
    } else if (id !== '' && !core.index.knows(id) && this.#spans.byStartId(id) === undefined) {
      // Start and end events of agent spans put themselves in the index; the rest lead on.
      core.index.rememberEvent(id, event.causation.parentId);
    }
    if (this.#spans.size > 0) core.sweep.ensureRunning();
  }

  /** The scope a handler of `event` runs in: the span the event started, if any. */
  scopeFor(event: BusEvent): ScopeRunner | undefined {
    return this.#spans.scopeFor(event);
  }

  namedTurn(event: BusEvent, turnId: string): SpanContext | undefined {
    if (turnId === '' || this.#spans.size === 0) return undefined;
    const session = this.#sessions.get(this.#sessions.idOf(event));
    return session === undefined ? undefined : namedTurn(session, turnId)?.spanContext;
  }

  readonly newestContainer = (event: BusEvent): SpanContext | undefined => {
    if (this.#spans.size === 0) return undefined;
    const session = this.#sessions.get(this.#sessions.idOf(event));
    return session === undefined ? undefined : containerFor(session, event)?.spanContext;
  };

  describe(sessionId: string, toolName: string): string | undefined {
    return this.#modelCalls.describe(sessionId, toolName);
  }

  sessionOf(event: BusEvent): string {
    return this.#sessions.idOf(event);
  }

  linksFor(sessionId: string, callId: string): Link[] | undefined {
    return this.#modelCalls.linksFor(sessionId, callId);
  }

  /**
   * The sweep's part for agent spans: ends those idle since `idleSince` with no open child,
   * then forgets what idle sessions kept waiting. Returns whether any agent span is open.
   */
  sweepIdle(idleSince: number): boolean {
    if (this.#spans.size === 0) return false;
    this.#spans.sweepIdle(idleSince);
    this.#sessions.sweepIdle(idleSince);
    return this.#spans.size > 0;
  }

  /** Ends every open agent span, marked `shutdown`; events still waiting count as unattached. */
  shutdown(): void {
    this.#spans.shutdown();
    this.#sessions.close();
  }

  /** Handles an agent event; `false` for any other type. */
  #onAgentEvent(event: BusEvent, now: number): boolean {
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
        this.#modelCalls.onRequest(event, now);
        return true;
      case LLM_RESPONSE:
      case LLM_STREAM_END:
      case LLM_ERROR:
        this.#modelCalls.onEnd(event, now);
        return true;
      case LLM_STREAM_CHUNK:
        this.#modelCalls.onChunk(event, now);
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
  #recordBusEvent(event: BusEvent, now: number): void {
    const session = this.#sessions.forEvent(event, now);
    this.#place(session, event, this.#spans.targetOf(event) ?? containerFor(session, event));
  }

  /** Records `event` on `target`, or holds it for the session's first span (bounded). */
  #place(session: SessionState, event: BusEvent, target: OpenSpan | undefined): void {
    if (target !== undefined) this.#spans.record(target, event);
    else if (session.pending.length < MAX_PENDING) session.pending.push(event);
    else this.#counts.busEventsUnattached += 1;
  }

  #sessionStart(event: BusEvent, now: number): void {
    const id = readSessionId(event.payload) || event.causation.sessionId;
    this.#sessions.announce(id);
    const session = this.#sessions.session(id, now);
    if (this.#core.options.traceBy !== 'session' || session.root !== undefined || id === '') return;
    this.#ensureRoot(session, event, now);
  }

  #ensureRoot(session: SessionState, event: BusEvent, now: number): AgentSpan {
    if (session.root !== undefined) return session.root;
    const root = this.#spans.start('session', event, now, session, {
      agentName: '',
      key: session.id,
      name: session.id === '' ? SESSION : `${SESSION} ${session.id}`,
      attributes: { [ATTR_GEN_AI_CONVERSATION_ID]: session.id, [ATTR_SPAN_KIND]: SESSION },
      selfKey: sessionRootKey(session.id),
      explicit: noSpan,
      heuristic: noSpan,
    });
    session.root = root;
    return root;
  }

  #sessionEnd(event: BusEvent, now: number): void {
    const id = readSessionId(event.payload) || this.#sessions.idOf(event);
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    const root = session.root;
    if (root === undefined) {
      session.lastActivity = now;
      this.#place(session, event, containerFor(session, event));
      return;
    }
    this.#spans.record(root, event);
    this.#spans.endAt(root, event, now);
  }

  #turnStart(event: BusEvent, now: number): void {
    const session = this.#sessions.forEvent(event, now);
    const fields = readTurn(event.payload);
    if (this.#spans.isDuplicateStart(event, () => namedTurn(session, fields.turnId))) return;
    if (this.#core.options.traceBy === 'session' && session.id !== '') {
      this.#ensureRoot(session, event, now);
    }
    const agentName = this.#core.options.agentName || event.causation.agentId;
    const attributes = this.#spans.commonAttributes(
      event,
      session.id,
      INVOKE_AGENT,
      'turn',
      agentName,
    );
    if (fields.turnId !== '') attributes[ATTR_TURN_ID] = fields.turnId;
    if (fields.iteration !== undefined) attributes[ATTR_TURN_ITERATION] = fields.iteration;
    const turn = this.#spans.start('turn', event, now, session, {
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
    const session = this.#sessions.forEvent(event, now);
    const { turnId } = readTurn(event.payload);
    const turn =
      (turnId !== '' ? namedTurn(session, turnId) : undefined) ?? newestTurn(session, event);
    if (turn === undefined) {
      this.#counts.unpairedEvents += 1;
      return;
    }
    this.#spans.endWith(turn, event, now, undefined);
  }

  #subagentStart(event: BusEvent, now: number): void {
    const session = this.#sessions.forEvent(event, now);
    const fields = readSubagent(event.payload);
    const open = fields.spawnId === '' ? undefined : subagentBySpawn(session, fields.spawnId);
    if (open !== undefined) {
      // `subagent.started` after its `subagent.spawn`: a mark on the span it opened.
      this.#spans.record(open, event);
      return;
    }
    if (this.#spans.isDuplicateStart(event)) return;
    const title =
      fields.title.length > MAX_TITLE ? `${fields.title.slice(0, MAX_TITLE - 1)}…` : fields.title;
    const attributes = this.#spans.commonAttributes(
      event,
      session.id,
      INVOKE_AGENT,
      'subagent',
      title,
    );
    if (fields.spawnId !== '') attributes[ATTR_SUBAGENT_SPAWN_ID] = fields.spawnId;
    if (fields.parentTurnId !== '') attributes[ATTR_TURN_ID] = fields.parentTurnId;
    const subagent = this.#spans.start('subagent', event, now, session, {
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
    const session = this.#sessions.forEvent(event, now);
    const subagent = this.#subagentOf(session, readSubagent(event.payload));
    if (subagent === undefined) {
      this.#recordBusEvent(event, now);
      return;
    }
    subagent.touch(event.timeUnixNano, now);
    this.#spans.record(subagent, event);
  }

  #subagentComplete(event: BusEvent, now: number): void {
    const session = this.#sessions.forEvent(event, now);
    const fields = readSubagent(event.payload);
    const subagent = this.#subagentOf(session, fields);
    if (subagent === undefined) {
      this.#counts.unpairedEvents += 1;
      return;
    }
    this.#spans.endWith(subagent, event, now, fields);
  }

  #subagentOf(session: SessionState, fields: SubagentFields): AgentSpan | undefined {
    if (fields.spawnId !== '') return subagentBySpawn(session, fields.spawnId);
    return session.subagents.at(-1);
  }
}

function noSpan(): undefined {
  return undefined;
}
