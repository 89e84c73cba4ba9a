import type { EndReason } from './attribute-names.js';
import type { SwallowedErrorKind } from './error-reporter.js';

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

/** Counters of a {@link ToolCallTracing}, from {@link ToolCallTracing.stats}. */
export interface ToolCallTracingStats {
  /** Spans started and not yet ended. */
  openSpans: number;
  /** Events waiting in the reorder window for their `tool.invoke`. */
  heldEvents: number;
  /** Their payloads' bytes (estimated), at most `maxHeldBytes`. */
  heldBytes: number;
  /**
   * Calls held past `maxHeldBytes` (or 256 events, or 1024 calls) whose span started without
   * waiting for their invoke any longer.
   */
  heldReleasedEarly: number;
  /**
   * What the tracer remembers of ended calls so late events are never a second span (see
   * `maxEndedCalls`): `keys` fingerprints in `bytes`; `forgotten` keys let go of, whose calls
   * are still told late by their bus sequence.
   */
  endedCalls: { keys: number; bytes: number; forgotten: number };
  spansStarted: number;
  /** Spans ended, by why. */
  spansEnded: Record<EndReason, number>;
  /** Spans started without a `tool.invoke` (from held stream events or a result). */
  orphanSpans: number;
  /** Stream events recorded on a span (as span events or in its summary). */
  streamEvents: number;
  /** Stream events only counted in their span's summary, not recorded as span events. */
  streamEventsCoalesced: number;
  /**
   * Stream events their producer let go before the bus (`tooltrace.stream.events.dropped` on
   * the result): an MCP progress burst past what the call's reader took, coalesced to its newest.
   */
  streamEventsDropped: number;
  /** Events seen twice (same invoke id, or same call and stream sequence), ignored. */
  duplicateEvents: number;
  /** Stream events and results that arrived after their span had ended, ignored. */
  lateEvents: number;
  /** Stream events that name no call at all (no parent id, no tool id), ignored. */
  unpairedEvents: number;
  /**
   * `tool.invoke`s that used a tool call id again in the same session (after its result, or
   * while the first call with it was still open): each is a call of its own, counted here.
   */
  reusedCallIds: number;
  /** Turn, model-call, sub-agent and session spans, and the other bus events placed on spans. */
  agent: AgentTracingStats;
  /** In-flight snapshot spans exported while calls ran (see `liveUpdates`). */
  inflightUpdates: number;
  /**
   * Failures swallowed so they never reach the bus, by kind; `export` counts flushes (from
   * `forceFlush()` or `shutdown()`) that failed and resolved anyway.
   */
  errors: Record<SwallowedErrorKind, number>;
}
