import { context, propagation, trace } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { EventBus } from '../../src/bus/index.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  type ToolCall,
  type ToolResult,
} from '../../src/events/index.js';
import { StreamingToolPlugin, type ChannelTool } from '../../src/streamtool/index.js';

/** Connects a real SDK Client to `server` over the SDK's in-memory transport pair. */
export async function connectInMemory(server: McpServer | Server): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'tooltrace-test', version: '1.0.0' });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return client;
}

/** Answers `tool.invoke` for each tool with a StreamingToolPlugin, as an agent would. */
export function attachTools(bus: EventBus, tools: readonly ChannelTool[]): StreamingToolPlugin[] {
  return tools.map((tool) => {
    const plugin = new StreamingToolPlugin(tool.name, () => tool);
    plugin.attach(bus);
    return plugin;
  });
}

/** Emits `tool.invoke` and resolves with its `tool.result`. */
export function callTool(bus: EventBus, call: ToolCall): Promise<ToolResult> {
  return new Promise((resolve) => {
    const off = bus.subscribe<ToolResult>(TOOL_RESULT, (event) => {
      if (event.payload.id !== call.id) return;
      off();
      resolve(event.payload);
    });
    bus.emit(TOOL_INVOKE, call);
  });
}

/** Leaves the OpenTelemetry globals as a fresh process has them. */
export function resetGlobals(): void {
  trace.disable();
  context.disable();
  propagation.disable();
}
