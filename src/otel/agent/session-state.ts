import type { BusEvent } from '../../bus/index.js';
import type { AgentSpan } from './agent-span.js';

/**
 * What the agent tracer knows of one session: its open spans (oldest first), model calls that
 * `llm.stream.end` ended whose `llm.response` may still come, and other events that came before
 * any of its spans opened.
 */
export interface SessionState {
  readonly id: string;
  /** The root span with `traceBy: 'session'`. */
  root: AgentSpan | undefined;
  readonly turns: AgentSpan[];
  readonly chats: AgentSpan[];
  readonly subagents: AgentSpan[];
  readonly streamEnded: AgentSpan[];
  readonly pending: BusEvent[];
  /** Subscriber clock (ms) of its latest event. */
  lastActivity: number;
}

/** A session with nothing open yet. */
export function newSession(id: string, now: number): SessionState {
  return {
    id,
    root: undefined,
    turns: [],
    chats: [],
    subagents: [],
    streamEnded: [],
    pending: [],
    lastActivity: now,
  };
}

/** The open turn named `turnId`, newest first; none for `''`. */
export function namedTurn(session: SessionState, turnId: string): AgentSpan | undefined {
  if (turnId === '') return undefined;
  const turns = session.turns;
  for (let index = turns.length - 1; index >= 0; index -= 1) {
    if (turns[index]!.key === turnId) return turns[index];
  }
  return undefined;
}

/** The newest open turn of the agent (id and depth) that emitted `event`. */
function sameAgentTurn(session: SessionState, event: BusEvent): AgentSpan | undefined {
  const { agentId, depth } = event.causation;
  const turns = session.turns;
  for (let index = turns.length - 1; index >= 0; index -= 1) {
    const turn = turns[index]!;
    if (turn.agentId === agentId && turn.depth === depth) return turn;
  }
  return undefined;
}

/** The turn an end event without a turn id closes: the same agent's newest, else the newest. */
export function newestTurn(session: SessionState, event: BusEvent): AgentSpan | undefined {
  return sameAgentTurn(session, event) ?? session.turns.at(-1);
}

/**
 * The agent span holding work of `event` that names no turn: the newest open turn of the same
 * agent, else a sub-agent it runs inside, else the newest turn, else the session's root.
 */
export function containerFor(session: SessionState, event: BusEvent): AgentSpan | undefined {
  return (
    sameAgentTurn(session, event) ??
    subagentFor(session, event) ??
    session.turns.at(-1) ??
    session.root
  );
}

/**
 * The newest open sub-agent that `event` runs inside: one spawned by another agent, or by the
 * same agent at a lower depth (a sub-agent's events carry its own agent id or a greater depth).
 */
export function subagentFor(session: SessionState, event: BusEvent): AgentSpan | undefined {
  const subagent = session.subagents.at(-1);
  if (subagent === undefined) return undefined;
  const { agentId, depth } = event.causation;
  return agentId !== subagent.agentId || depth > subagent.depth ? subagent : undefined;
}

/** The open model call of request `requestId`. */
export function chatByRequest(session: SessionState, requestId: string): AgentSpan | undefined {
  return session.chats.find((chat) => chat.key === requestId);
}

/** The open sub-agent of spawn `spawnId`. */
export function subagentBySpawn(session: SessionState, spawnId: string): AgentSpan | undefined {
  return session.subagents.find((subagent) => subagent.key === spawnId);
}

/** Takes an ended span out of the session's open spans. */
export function forgetSpan(session: SessionState, agent: AgentSpan): void {
  if (session.root === agent) session.root = undefined;
  removeFrom(session.turns, agent);
  removeFrom(session.chats, agent);
  removeFrom(session.subagents, agent);
}

function removeFrom(list: AgentSpan[], agent: AgentSpan): void {
  const index = list.indexOf(agent);
  if (index !== -1) list.splice(index, 1);
}

/** Whether no span of the session is open and nothing waits in it. */
export function isEmpty(session: SessionState): boolean {
  return isEmptyButPending(session) && session.pending.length === 0;
}

/** Whether no span of the session is open (events may wait for one). */
export function isEmptyButPending(session: SessionState): boolean {
  return (
    session.root === undefined &&
    session.turns.length === 0 &&
    session.chats.length === 0 &&
    session.subagents.length === 0
  );
}
