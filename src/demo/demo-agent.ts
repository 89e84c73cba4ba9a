import type { EventBus } from '../bus/index.js';
import { TOOL_INVOKE, type ToolCall, type ToolResult } from '../events/index.js';
import { bridge, StreamingToolPlugin } from '../streamtool/index.js';
import {
  callTool,
  fetchPricesTool,
  indexFilesTool,
  lookupWeatherTool,
  planTripTool,
  researchTool,
  slowSearchTool,
  summarizeTool,
  writeReportTool,
  type DemoPace,
} from './demo-tools.js';

/** Type of the event that starts the demo's turn (the causal root of every call). */
export const AGENT_TURN = 'agent.turn';
/** Type of the event the agent emits when its turn is over. */
export const AGENT_TURN_COMPLETED = 'agent.turn.completed';

/** The calls the demo agent makes in its turn, top level only. */
export const DEMO_CALLS: readonly ToolCall[] = [
  { id: 'tc_report', name: 'write_report', arguments: { topic: 'tool streams' }, turnId: 'turn-1' },
  { id: 'tc_index', name: 'index_files', arguments: { root: 'src/' }, turnId: 'turn-1' },
  { id: 'tc_prices', name: 'fetch_prices', arguments: { markets: 4 }, turnId: 'turn-1' },
  { id: 'tc_search', name: 'slow_search', arguments: { query: 'everything' }, turnId: 'turn-1' },
  { id: 'tc_trip', name: 'plan_trip', arguments: { city: 'Lisbon' }, turnId: 'turn-1' },
  { id: 'tc_research', name: 'research', arguments: { topic: 'causation' }, turnId: 'turn-1' },
];

/** Every tool call the demo makes, nested ones included. */
export const DEMO_CALL_COUNT = DEMO_CALLS.length + 2;

/** How long `slow_search` may run before the agent cancels it, before pacing. */
const SEARCH_DEADLINE_MS = 1200;

/**
 * A small scripted agent (no network, no model): one turn that calls six tools, some at once —
 * one streams a report, one reports progress over many files, one fails halfway, one is
 * cancelled by a deadline, one calls another tool, one starts a sub-agent at depth 1 — and waits
 * for every result. Resolves with the top-level results once the turn is over.
 */
export async function runDemoAgent(bus: EventBus, pace: DemoPace): Promise<ToolResult[]> {
  const plugins = [
    new StreamingToolPlugin('write_report', () => writeReportTool(pace)),
    new StreamingToolPlugin('index_files', () => indexFilesTool(pace)),
    new StreamingToolPlugin('fetch_prices', () => fetchPricesTool(pace)),
    new StreamingToolPlugin('lookup_weather', () => lookupWeatherTool(pace)),
    new StreamingToolPlugin('summarize', () => summarizeTool(pace)),
    new StreamingToolPlugin('plan_trip', () => planTripTool(pace, bus)),
    new StreamingToolPlugin('research', () => researchTool(pace, bus)),
  ];
  for (const plugin of plugins) plugin.attach(bus);

  // slow_search runs under a deadline: bridge cancels it when the signal aborts.
  const offSearch = bus.subscribe<ToolCall>(
    TOOL_INVOKE,
    (event) => {
      if (event.payload.name !== 'slow_search') return;
      const signal = AbortSignal.timeout(pace.scale(SEARCH_DEADLINE_MS));
      bridge(bus, slowSearchTool(pace), event.payload, { signal }).catch(() => {
        // The cancellation is on the bus as the call's tool.result.
      });
    },
    { source: 'demo.deadline' },
  );

  const turn = new Promise<ToolResult[]>((resolve, reject) => {
    const off = bus.subscribe(AGENT_TURN, () => {
      off();
      const never = new AbortController().signal;
      const calls = DEMO_CALLS.map(async (call, index) => {
        await pace.sleep(index * 150, never);
        return callTool(bus, call, never);
      });
      Promise.all(calls).then((results) => {
        bus.emit(AGENT_TURN_COMPLETED, { turnId: 'turn-1', calls: results.length });
        resolve(results);
      }, reject);
    });
  });
  bus.withCausation({ sessionId: 'demo-session', agentId: 'planner', depth: 0 }, () =>
    bus.emit(AGENT_TURN, { turnId: 'turn-1', prompt: 'Write a report on tool streams' }),
  );
  try {
    return await turn;
  } finally {
    offSearch();
    await Promise.all(plugins.map((plugin) => plugin.shutdown()));
  }
}
