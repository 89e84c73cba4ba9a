/**
 * MCP tools, traced on both sides. Run it with `npx tsx examples/mcp.ts`.
 *
 * A tooltrace tool is served over MCP with `serveMcpTools`; an agent's MCP client lists it with
 * `mcpTools` and calls it through its bus. Client and server run here over the SDK's in-memory
 * transport (over stdio they would be two processes, and the trace the same): the server's span
 * continues the client's, whose context travels in `params._meta`. The spans go to an embedded
 * OTLP receiver, and the program prints what arrived.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { z } from 'zod';
import {
  EventBus,
  StreamingToolPlugin,
  TOOL_INVOKE,
  TOOL_RESULT,
  type ChannelTool,
  type ToolEvent,
  type ToolResult,
} from '../src/index.js';
import { mcpTools, serveMcpTools } from '../src/mcp/index.js';
import { traceToolCalls } from '../src/otel/index.js';
import { startOtlpReceiver } from '../src/testing/index.js';

const receiver = await startOtlpReceiver();
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
});
provider.register();

// The MCP server: a streaming tool, each call emitted on the server's own bus and traced there.
const countFiles: ChannelTool = {
  name: 'count_files',
  async *stream(signal, input): AsyncGenerator<ToolEvent> {
    const folder = String(input.folder);
    for (let step = 1; step <= 4; step += 1) {
      await sleep(20, undefined, { signal });
      yield { kind: 'progress', progress: step / 4 };
      if (step % 2 === 0) yield { kind: 'partial', payload: `${folder}: ${step * 10} files` };
    }
    yield { kind: 'complete', payload: { folder, files: 40 } };
  },
};
const serverBus = new EventBus();
const serverTracing = traceToolCalls(serverBus, { liveUpdates: false });
const server = new McpServer({ name: 'files', version: '1.0.0' });
serveMcpTools(
  server,
  [
    {
      tool: countFiles,
      description: 'Counts the files in a folder',
      inputSchema: { folder: z.string() },
    },
  ],
  { bus: serverBus },
);

// The agent: its MCP client's tools on its bus.
const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: 'agent', version: '1.0.0' });
await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
const bus = new EventBus();
const tracing = traceToolCalls(bus, { liveUpdates: false });
for (const tool of await mcpTools(client)) {
  new StreamingToolPlugin(tool.name, () => tool).attach(bus);
}

const result = await new Promise<ToolResult>((resolve) => {
  bus.subscribe<ToolResult>(TOOL_RESULT, (event) => resolve(event.payload));
  bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'count_files', arguments: { folder: 'src' } });
});
console.log(`result: ${result.output}`);

await client.close();
await Promise.all([tracing.shutdown(), serverTracing.shutdown()]);
await provider.shutdown();
const spans = await receiver.waitForSpans(2);
const byParent = [...spans].sort((a, b) =>
  a.parentSpanId === '' ? -1 : b.parentSpanId === '' ? 1 : 0,
);
for (const [depth, span] of byParent.entries()) {
  const count = (name: string): number => span.events.filter((event) => event.name === name).length;
  console.log(
    `${'  '.repeat(depth)}${span.name} (${depth === 0 ? 'client' : 'server'}): ` +
      `${count('tool.stream.progress')} progress, ${count('tool.stream.partial')} partials, ` +
      `mcp.method.name=${String(span.attributes['mcp.method.name'])}`,
  );
}
console.log(`one trace: ${new Set(spans.map((span) => span.traceId)).size === 1}`);
await receiver.close();
