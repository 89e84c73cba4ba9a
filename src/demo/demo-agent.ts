import { randomBytes } from 'node:crypto';
import type { BusEvent, EventBus } from '../bus/index.js';
import {
  AGENT_TURN_END,
  AGENT_TURN_START,
  IO_SESSION_END,
  IO_SESSION_START,
  TOOL_INVOKE,
  type ToolCall,
  type ToolResult,
} from '../events/index.js';
import { bridge, declareAnsweredTools, StreamingToolPlugin } from '../streamtool/index.js';
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
} from './demo-tools.js';
import type { DemoPace } from './demo-pace.js';

import { askModel } from './simulated-model.js';

/**
 * A new session id for a demo run, `demo-` and 8 hex digits: `gen_ai.conversation.id` of every
 * span. Trace and span ids derive from the session and the events, so a fixed session would
 * give every run the same trace id and root span id, and two runs exported to one backend
 * would merge into one trace with two roots.
 */
export function newDemoSessionId(): string {
  return `demo-${randomBytes(4).toString('hex')}`;
}

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

/**
 * Every span of the demo's trace: the session, the turn, its two model calls, the tool calls,
 * and the sub-agent with its one model call.
 */
export const DEMO_SPAN_COUNT = 1 + 1 + 2 + DEMO_CALL_COUNT + 1 + 1;

/** How long `slow_search` may run before the agent cancels it, before pacing. */
const SEARCH_DEADLINE_MS = 1200;

/**
 * A small scripted agent with a simulated model (no network, no model): one turn in which the
 * model asks for six tools, some at once — one streams a report, one reports progress over many
 * files, one fails halfway, one is cancelled by a deadline, one calls another tool, one starts a
 * sub-agent that asks its own model and calls a tool — then, with every result in, the model
 * answers, all in session `sessionId` (a new one each run by default). Resolves with the
 * top-level results once the turn is over.
 */
export async function runDemoAgent(
  bus: EventBus,
  pace: DemoPace,
  sessionId: string = newDemoSessionId(),
): Promise<ToolResult[]> {
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

  // slow_search runs under a deadline: bridge cancels it when the signal aborts. Answered by a
  // subscriber of its own, so it is declared (else the plugins' bus calls it an unknown tool).
  const undeclareSearch = declareAnsweredTools(bus, ['slow_search']);
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

  try {
    return await bus.withCausation({ sessionId, agentId: 'planner', depth: 0 }, () => {
      bus.emit(IO_SESSION_START, { sessionId }, { source: 'demo.agent' });
      const turn = bus.emit(
        AGENT_TURN_START,
        { turnId: 'turn-1', iteration: 1 },
        { source: 'demo.agent' },
      );
      return runTurn(bus, pace, turn, sessionId);
    });
  } finally {
    offSearch();
    undeclareSearch();
    await Promise.all(plugins.map((plugin) => plugin.shutdown()));
  }
}

/** The turn: ask the model, run the calls it asks for, give it the results, end the turn. */
async function runTurn(
  bus: EventBus,
  pace: DemoPace,
  turn: BusEvent,
  sessionId: string,
): Promise<ToolResult[]> {
  const never = new AbortController().signal;
  const plan = await askModel(bus, pace, {
    requestId: 'req-1',
    turnId: 'turn-1',
    model: 'sim-planner',
    text: 'I will write the report, index the sources and check three more things.',
    toolCalls: DEMO_CALLS.map((call) => ({ id: call.id, name: call.name })),
    inputTokens: 1840,
    thinkMs: 300,
    parent: turn,
  });
  const results = await Promise.all(
    DEMO_CALLS.map(async (call, index) => {
      await pace.sleep(index * 150, never);
      return callTool(bus, call, never, plan);
    }),
  );
  const answer = await askModel(bus, pace, {
    requestId: 'req-2',
    turnId: 'turn-1',
    model: 'sim-planner',
    text: 'The report is written; prices failed for one market and the search timed out.',
    inputTokens: 2630,
    thinkMs: 200,
    parent: plan,
  });
  bus.emit(
    AGENT_TURN_END,
    { turnId: 'turn-1', iteration: 1 },
    { source: 'demo.agent', causation: { parentId: answer.id } },
  );
  bus.emit(IO_SESSION_END, { sessionId }, { source: 'demo.agent' });
  return results;
}
