import type { AgentTracingStats } from '../tracing-stats.js';

/** The agent tracer's counters, shared by the parts of the agent room that count. */
export type AgentCounts = Omit<AgentTracingStats, 'openSpans' | 'spansEnded'>;

/** Counters at zero. */
export function newAgentCounts(): AgentCounts {
  return {
    spansStarted: 0,
    inferredStarts: 0,
    responsesAfterStreamEnd: 0,
    busEventsRecorded: 0,
    busEventsCoalesced: 0,
    busEventsUnattached: 0,
    duplicateEvents: 0,
    unpairedEvents: 0,
  };
}
