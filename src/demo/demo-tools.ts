import type { BusEvent, EventBus } from '../bus/index.js';
import {
  SUBAGENT_COMPLETE,
  SUBAGENT_SPAWN,
  TOOL_INVOKE,
  TOOL_RESULT,
  type ToolCall,
  type ToolResult,
} from '../events/index.js';
import type { ChannelTool, RequestResponseTool, ToolEvent } from '../streamtool/index.js';
import type { DemoPace } from './demo-pace.js';
import { askModel } from './simulated-model.js';

const REPORT_SECTIONS = [
  '## Summary\nTool calls stream progress and partial output onto the bus.',
  '## Findings\nEvery call became a span; its stream became span events.',
  '## Causation\nNested calls and sub-agents nest in the trace through causation.',
  '## Next steps\nShip the same events to a sidecar and on to Jaeger or Tempo.',
];

/** Streams a report section by section (partial output). */
export function writeReportTool(pace: DemoPace): ChannelTool {
  return {
    name: 'write_report',
    async *stream(signal): AsyncGenerator<ToolEvent> {
      let report = '';
      for (const section of REPORT_SECTIONS) {
        await pace.sleep(450, signal);
        report += `${section}\n`;
        yield { kind: 'partial', payload: section };
      }
      yield { kind: 'complete', payload: report };
    },
  };
}

/** Reports progress over many files. */
export function indexFilesTool(pace: DemoPace): ChannelTool {
  const files = 48;
  return {
    name: 'index_files',
    async *stream(signal): AsyncGenerator<ToolEvent> {
      for (let index = 1; index <= files; index += 1) {
        await pace.sleep(40, signal);
        yield { kind: 'progress', progress: index / files, payload: `src/file-${index}.ts` };
      }
      yield { kind: 'complete', payload: { indexed: files } };
    },
  };
}

/** Fails halfway through. */
export function fetchPricesTool(pace: DemoPace): ChannelTool {
  return {
    name: 'fetch_prices',
    async *stream(signal): AsyncGenerator<ToolEvent> {
      for (const [index, market] of ['NYSE', 'LSE', 'TSE'].entries()) {
        await pace.sleep(300, signal);
        yield { kind: 'progress', progress: (index + 1) / 6, payload: market };
      }
      await pace.sleep(200, signal);
      yield { kind: 'error', error: new Error('price feed returned HTTP 503 for market FRA') };
    },
  };
}

/** Would take far longer than its deadline allows: the caller cancels it. */
export function slowSearchTool(pace: DemoPace): ChannelTool {
  return {
    name: 'slow_search',
    async *stream(signal): AsyncGenerator<ToolEvent> {
      for (let page = 1; ; page += 1) {
        await pace.sleep(350, signal);
        yield { kind: 'partial', payload: `results page ${page}` };
      }
    },
  };
}

/** A plain request-response tool: no stream, one result. */
export function lookupWeatherTool(pace: DemoPace): RequestResponseTool {
  return {
    name: 'lookup_weather',
    async execute(input, signal) {
      await pace.sleep(400, signal);
      return {
        city: typeof input.city === 'string' ? input.city : 'Lisbon',
        forecast: 'sunny',
        celsius: 24,
      };
    },
  };
}

/** Summarises text; the demo runs it inside a sub-agent. */
export function summarizeTool(pace: DemoPace): ChannelTool {
  return {
    name: 'summarize',
    async *stream(signal): AsyncGenerator<ToolEvent> {
      for (const sentence of ['Streams are observable.', 'Causation builds the tree.']) {
        await pace.sleep(300, signal);
        yield { kind: 'partial', payload: sentence };
      }
      yield { kind: 'complete', payload: 'Streams are observable; causation builds the tree.' };
    },
  };
}

/**
 * Emits a `tool.invoke` from inside a running tool and waits for its `tool.result`: the nested
 * call's causation parent is the calling tool's invoke, so its span nests under it.
 */
export function callTool(
  bus: EventBus,
  call: ToolCall,
  signal: AbortSignal,
  cause?: BusEvent,
): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve, reject) => {
    const off = bus.subscribe<ToolResult>(TOOL_RESULT, (event: BusEvent<ToolResult>) => {
      if (event.payload.id !== call.id) return;
      off();
      signal.removeEventListener('abort', onAbort);
      resolve(event.payload);
    });
    const onAbort = (): void => {
      off();
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    bus.emit(TOOL_INVOKE, call, {
      source: 'demo.agent',
      ...(cause === undefined ? {} : { causation: { parentId: cause.id } }),
    });
  });
}

/** Plans a trip and calls `lookup_weather` itself: a nested tool call. */
export function planTripTool(pace: DemoPace, bus: EventBus): ChannelTool {
  return {
    name: 'plan_trip',
    async *stream(signal, input): AsyncGenerator<ToolEvent> {
      const city = typeof input.city === 'string' ? input.city : 'Lisbon';
      yield { kind: 'partial', payload: `choosing dates for ${city}` };
      await pace.sleep(250, signal);
      const weather = await callTool(
        bus,
        { id: 'tc_weather', name: 'lookup_weather', arguments: { city }, turnId: 'turn-1' },
        signal,
      );
      yield { kind: 'partial', payload: `weather: ${weather.output}` };
      await pace.sleep(250, signal);
      yield { kind: 'complete', payload: `3 days in ${city}, pack sunglasses` };
    },
  };
}

/**
 * Researches a topic by starting a sub-agent (`researcher`, depth 1): `subagent.spawn`, one
 * question to the simulated model, a `summarize` call it asks for, `subagent.complete`.
 */
export function researchTool(pace: DemoPace, bus: EventBus): ChannelTool {
  return {
    name: 'research',
    async *stream(signal, input): AsyncGenerator<ToolEvent> {
      yield { kind: 'progress', progress: 0.1, payload: 'starting sub-agent researcher' };
      const spawn = bus.emit(
        SUBAGENT_SPAWN,
        {
          spawnId: 'sub-1',
          name: 'researcher',
          task: `summarize ${String(input.topic)}`,
          parentTurnId: 'turn-1',
        },
        { source: 'demo.agent' },
      );
      const summary = await bus.withCausation({ agentId: 'researcher', depth: 1 }, async () => {
        const answer = await askModel(bus, pace, {
          requestId: 'req-sub-1',
          turnId: 'turn-1',
          model: 'sim-small',
          text: 'I will summarize the findings.',
          toolCalls: [{ id: 'tc_summarize', name: 'summarize' }],
          inputTokens: 310,
          thinkMs: 120,
          parent: spawn,
        });
        return callTool(
          bus,
          {
            id: 'tc_summarize',
            name: 'summarize',
            arguments: { topic: input.topic },
            turnId: 'turn-1',
          },
          signal,
          answer,
        );
      });
      bus.emit(
        SUBAGENT_COMPLETE,
        {
          spawnId: 'sub-1',
          iterations: 1,
          tokensUsed: { inputTokens: 310, outputTokens: 18 },
          costUsd: 0.0008,
        },
        { source: 'demo.agent', causation: { parentId: spawn.id } },
      );
      yield { kind: 'progress', progress: 1, payload: 'sub-agent done' };
      yield { kind: 'complete', payload: summary.output };
    },
  };
}
