/**
 * A streaming tool written as an async generator, wired to a bus with StreamingToolPlugin.
 * Run it with `node --import tsx examples/streaming-tool.ts`.
 *
 * The tool "summarizes" a list of files: it reports progress, streams one partial per file, and
 * ends with the whole summary. A subscriber prints every event and checks that each one is a
 * child of the tool.invoke that started the call.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EventBus,
  StreamingToolPlugin,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  type BusEvent,
  type ChannelTool,
  type ToolCall,
  type ToolEvent,
  type ToolResult,
  type ToolStreamPartial,
  type ToolStreamProgress,
} from '../src/index.js';

/** The tool: one `stream` call per tool call; stop when the signal aborts. */
const summarize: ChannelTool = {
  name: 'summarize',
  async *stream(signal: AbortSignal, input: Record<string, unknown>): AsyncGenerator<ToolEvent> {
    const files = Array.isArray(input.files) ? input.files.map(String) : [];
    yield { kind: 'progress', progress: 0, payload: `summarizing ${files.length} files` };
    const lines: string[] = [];
    for (const [index, file] of files.entries()) {
      // Stands in for real work; passing the signal makes cancellation take effect at once.
      await sleep(10, undefined, { signal });
      const line = `${file}: ${file.length * 7} lines`;
      lines.push(line);
      yield { kind: 'partial', payload: line };
      yield { kind: 'progress', progress: (index + 1) / files.length };
    }
    // The final output: a string goes into tool.result as it is, anything else as JSON.
    yield { kind: 'complete', payload: { files: files.length, summary: lines } };
  },
};

const bus = new EventBus();
bus.setDefaultCausation({ sessionId: 'session-1', agentId: 'planner' });

let invokeId = '';
const linked = (event: BusEvent): string =>
  event.causation.parentId === invokeId ? 'child of tool.invoke' : 'NOT LINKED';

bus.subscribe<ToolStreamProgress>(TOOL_STREAM_PROGRESS, (event) => {
  const { sequence, progress } = event.payload;
  const percent = progress < 0 ? 'unknown' : `${Math.round(progress * 100)}%`;
  console.log(`progress #${sequence} ${percent} (${linked(event)})`);
});
bus.subscribe<ToolStreamPartial>(TOOL_STREAM_PARTIAL, (event) => {
  const { sequence, payload } = event.payload;
  console.log(`partial  #${sequence} ${String(payload)} (${linked(event)})`);
});
const finished = new Promise<ToolResult>((resolve) => {
  bus.subscribe<ToolResult>(TOOL_RESULT, (event) => {
    console.log(`result   ${event.payload.output} (${linked(event)})`);
    resolve(event.payload);
  });
});

// The plugin answers tool.invoke for "summarize" by running the tool through bridge.
const plugin = new StreamingToolPlugin('summarize', () => summarize);
plugin.attach(bus);

const call: ToolCall = {
  id: 'tc_1',
  name: 'summarize',
  arguments: { files: ['README.md', 'src/index.ts', 'package.json'] },
  turnId: 'turn-1',
};
invokeId = bus.emit(TOOL_INVOKE, call).id;

const result = await finished;
console.log(result.error === undefined ? 'done' : `failed: ${result.error}`);
await plugin.shutdown();
