import { setTimeout as sleep } from 'node:timers/promises';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_INVOKE } from '../../src/events/index.js';
import { mcpTools, serveMcpTools } from '../../src/mcp/index.js';
import type { ChannelTool } from '../../src/streamtool/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';

let harness: TracingHarness | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

function countFiles(seen: { aborted?: boolean; meta?: unknown }): ChannelTool {
  return {
    name: 'count_files',
    async *stream(signal, input) {
      signal.addEventListener('abort', () => void (seen.aborted = true), { once: true });
      for (let step = 1; step <= 2; step += 1) {
        await sleep(input.slow === true ? 10_000 : 5, undefined, { signal });
        yield { kind: 'progress', progress: step / 2 };
      }
      yield { kind: 'complete', payload: { files: 40 } };
    },
  };
}

async function connect(seen: { aborted?: boolean }): Promise<Client> {
  const server = new McpServer({ name: 'files', version: '1.0.0' });
  serveMcpTools(server, [
    { tool: countFiles(seen), inputSchema: { slow: z.boolean().optional() } },
  ]);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const connected = new Client({ name: 'agent', version: '2.0.0' });
  await Promise.all([server.connect(serverTransport), connected.connect(clientTransport)]);
  return connected;
}

describe('mcpTools() with the 2.x client (@modelcontextprotocol/client)', () => {
  it('passes its options second: progress arrives, and the span has the id that was sent', async () => {
    harness = await startTracingHarness({ register: true });
    client = await connect({});
    attachTools(harness.bus, await mcpTools(client));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'count_files', arguments: {} });

    expect(JSON.parse(result.output)).toMatchObject({ structuredContent: { files: 40 } });
    const span = await harness.span('execute_tool count_files');
    const progress = span.events.filter((event) => event.name === 'tool.stream.progress');
    expect(progress.map((event) => event.attributes['tooltrace.stream.progress'])).toEqual([
      0.5, 1,
    ]);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': expect.stringMatching(/^\d+$/) as string,
    });
  });

  it("aborts the server's tool when the call is cancelled", async () => {
    const seen: { aborted?: boolean } = {};
    client = await connect(seen);
    const bus = new EventBus();
    const plugins = attachTools(bus, await mcpTools(client));
    bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'count_files', arguments: { slow: true } });
    await sleep(50);
    await Promise.all(plugins.map((plugin) => plugin.shutdown()));
    while (seen.aborted !== true) await sleep(5);
    expect(seen.aborted).toBe(true);
  });
});
