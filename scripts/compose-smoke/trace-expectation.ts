/** How a tool call ended, as its `execute_tool` span says. */
export type CallOutcome = 'ok' | 'error' | 'cancelled';

/** One tool call a trace must hold. */
export interface ExpectedCall {
  /** `gen_ai.tool.name`. */
  tool: string;
  outcome: CallOutcome;
  /** The tool whose call this one must sit under (at any depth: agent spans may come between). */
  within?: string;
}

/** The shape a trace must have: exactly these `execute_tool` calls, other spans tolerated. */
export interface TraceExpectation {
  /** For messages: what the trace is (`the demo agent's turn`). */
  description: string;
  calls: readonly ExpectedCall[];
}

/**
 * What `tooltrace demo` exports for its one turn (src/demo/demo-agent.ts and demo-tools.ts):
 * six calls the agent makes, `lookup_weather` called by `plan_trip`, `summarize` run by a
 * sub-agent that `research` started; `fetch_prices` fails, `slow_search` is cancelled by its
 * deadline. The session, `invoke_agent` and `chat` spans around them are not part of it.
 * test/deploy/trace-check.test.ts runs the real demo and checks this still describes it.
 */
export const DEMO_TRACE: TraceExpectation = {
  description: "the demo agent's turn",
  calls: [
    { tool: 'write_report', outcome: 'ok' },
    { tool: 'index_files', outcome: 'ok' },
    { tool: 'fetch_prices', outcome: 'error' },
    { tool: 'slow_search', outcome: 'cancelled' },
    { tool: 'plan_trip', outcome: 'ok' },
    { tool: 'lookup_weather', outcome: 'ok', within: 'plan_trip' },
    { tool: 'research', outcome: 'ok' },
    { tool: 'summarize', outcome: 'ok', within: 'research' },
  ],
};
