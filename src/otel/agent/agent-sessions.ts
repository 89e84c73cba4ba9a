import type { BusEvent } from '../../bus/index.js';
import type { AgentCounts } from './agent-counts.js';
import { isEmpty, isEmptyButPending, newSession, type SessionState } from './session-state.js';

/**
 * The sessions the agent tracer knows, bounded: each one's open spans and the events waiting
 * for its first span. Events that name no session belong to the one `io.session.start` last
 * announced on the bus.
 */
export class AgentSessions {
  readonly #sessions = new Map<string, SessionState>();
  readonly #maxSessions: number;
  readonly #counts: AgentCounts;
  /** The session an event without one belongs to: the last one started on this bus. */
  #lastStarted = '';

  constructor(maxSessions: number, counts: AgentCounts) {
    this.#maxSessions = maxSessions;
    this.#counts = counts;
  }

  /** The session `event` belongs to: its own, else the one last started on the bus. */
  readonly idOf = (event: BusEvent): string => {
    const id = event.causation.sessionId;
    return id !== '' ? id : this.#lastStarted;
  };

  /** Notes that `io.session.start` announced session `id`. */
  announce(id: string): void {
    this.#lastStarted = id;
  }

  /** The session `id`, made when new (forgetting the oldest idle one past the bound); its activity noted. */
  session(id: string, now: number): SessionState {
    let session = this.#sessions.get(id);
    if (session === undefined) {
      if (this.#sessions.size >= this.#maxSessions) this.#forgetOldestIdle();
      session = newSession(id, now);
      this.#sessions.set(id, session);
    } else {
      session.lastActivity = now;
    }
    return session;
  }

  /** The session `event` belongs to, made when new; its activity noted. */
  forEvent(event: BusEvent, now: number): SessionState {
    return this.session(this.idOf(event), now);
  }

  /** The session `id` if known, nothing noted. */
  get(id: string): SessionState | undefined {
    return this.#sessions.get(id);
  }

  /**
   * Forgets what sessions idle since `idleSince` kept waiting (counted as unattached), and the
   * sessions left with nothing (but the last one started).
   */
  sweepIdle(idleSince: number): void {
    for (const session of this.#sessions.values()) {
      if (session.lastActivity > idleSince) continue;
      this.#counts.busEventsUnattached += session.pending.length;
      session.pending.length = 0;
      if (isEmpty(session) && session.id !== this.#lastStarted) this.#sessions.delete(session.id);
    }
  }

  /** Counts every event still waiting for a span as unattached: nothing opens any more. */
  close(): void {
    for (const session of this.#sessions.values()) {
      this.#counts.busEventsUnattached += session.pending.length;
      session.pending.length = 0;
    }
  }

  /**
   * Bounds the sessions remembered: the oldest one with no open span is forgotten, its waiting
   * events counted as unattached. Sessions with open spans are bounded by `maxOpenSpans` anyway.
   */
  #forgetOldestIdle(): void {
    for (const session of this.#sessions.values()) {
      if (!isEmptyButPending(session) || session.id === this.#lastStarted) continue;
      this.#counts.busEventsUnattached += session.pending.length;
      this.#sessions.delete(session.id);
      return;
    }
  }
}
