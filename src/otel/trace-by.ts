/** How calls that have no parent span are grouped into traces. */
export type TraceBy = 'causal-root' | 'session' | 'call';
