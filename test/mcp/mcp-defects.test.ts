import { execFile } from 'node:child_process';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools, McpNotConnectedError, serveMcpTools } from '../../src/mcp/index.js';
import { TOOL_INVOKE } from '../../src/events/index.js';
import type { ChannelTool, ToolEvent } from '../../src/streamtool/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { ROOT } from '../demo/cli-process.js';
import { attachTools, callTool, connectInMemory, resetGlobals } from './mcp-harness.js';

let harness: TracingHarness | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** A server whose `wait` tool runs until cancelled, telling the id of each request it got. */
function waitingServer(requestIds: string[]): McpServer {
  const server = new McpServer({ name: 'slow', version: '1.0.0' });
  server.registerTool('wait', { description: 'Waits until cancelled' }, (extra) => {
    requestIds.push(String(extra.requestId));
    return new Promise((_, reject) => {
      extra.signal.addEventListener('abort', () => reject(new Error('stopped')));
    });
  });
  return server;
}

function progressOf(events: readonly ToolEvent[]): ChannelTool {
  return {
    name: 'steps',
    async *stream() {
      await nextTurn();
      for (const event of events) yield event;
      yield { kind: 'complete', payload: 'done' };
    },
  };
}

describe('MCP defects of issue 34', () => {
  it("keeps the MCP attributes on a call its plugin's shutdown cancels, with the id the server received", async () => {
    harness = await startTracingHarness({ register: true });
    const requestIds: string[] = [];
    client = await connectInMemory(waitingServer(requestIds));
    const plugins = attachTools(harness.bus, await mcpTools(client));
    harness.bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'wait', arguments: {} });
    while (requestIds.length === 0) await nextTurn();

    await Promise.all(plugins.map((plugin) => plugin.shutdown()));

    const span = await harness.span('execute_tool wait');
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': requestIds[0],
      'gen_ai.tool.description': 'Waits until cancelled',
    });
    expect(span.attributes).toMatchObject({
      'tooltrace.tool.cancelled': true,
      'error.type': 'cancelled',
    });
  });

  it('gives each call the id its own request went out with, side by side', async () => {
    harness = await startTracingHarness({ register: true });
    const server = new McpServer({ name: 'echo', version: '1.0.0' });
    const seen: Record<string, string> = {};
    server.registerTool('echo', {}, (extra) => {
      seen[String(extra._meta?.traceparent)] = String(extra.requestId);
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    client = await connectInMemory(server);
    attachTools(harness.bus, await mcpTools(client));
    await client.ping();

    await Promise.all([
      callTool(harness.bus, { id: 'tc_1', name: 'echo', arguments: {} }),
      callTool(harness.bus, { id: 'tc_2', name: 'echo', arguments: {} }),
    ]);

    const spans = await harness.spans(2);
    for (const span of spans) {
      const traceparent = `00-${span.traceId}-${span.spanId}-01`;
      expect(span.attributes['jsonrpc.request.id']).toBe(seen[traceparent]);
    }
  });

  it('gives no jsonrpc.request.id to a call whose request was never sent', async () => {
    harness = await startTracingHarness({ register: true });
    client = await connectInMemory(waitingServer([]));
    const tools = await mcpTools(client);
    await client.close();
    attachTools(harness.bus, tools);

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'wait', arguments: {} });

    expect(result.error).toContain('Not connected');
    const span = await harness.span('execute_tool wait');
    expect(span.attributes['mcp.method.name']).toBe('tools/call');
    expect(span.attributes).not.toHaveProperty('jsonrpc.request.id');
  });

  it('sends strictly increasing progress for repeated fractions and for unknown-then-known progress', async () => {
    const server = new McpServer({ name: 'steps', version: '1.0.0' });
    serveMcpTools(server, [
      progressOf([
        { kind: 'progress', progress: 0.25 },
        { kind: 'progress', progress: 0.25 },
        { kind: 'progress', progress: 0.5 },
        { kind: 'progress', progress: -1 },
      ]),
      {
        ...progressOf([
          { kind: 'progress' },
          { kind: 'progress' },
          { kind: 'progress' },
          { kind: 'progress', progress: 0.5 },
          { kind: 'partial', payload: 'half' },
        ]),
        name: 'unknown_first',
      },
    ]);
    client = await connectInMemory(server);
    for (const name of ['steps', 'unknown_first']) {
      const notes: Progress[] = [];
      await client.callTool({ name }, undefined, { onprogress: (note) => void notes.push(note) });
      const values = notes.map((note) => note.progress);
      for (let index = 1; index < values.length; index += 1) {
        expect(values[index]).toBeGreaterThan(values[index - 1]!);
      }
      const fractions = notes.map((note) =>
        note.total === undefined ? -1 : note.progress / note.total,
      );
      expect(fractions).toEqual(name === 'steps' ? [0.25, 0.25, 0.5, 0.5] : [-1, -1, -1, 0.5, 0.5]);
    }
  });

  it('waits for the handshake of a client whose connect() was not awaited, and lists every tool', async () => {
    const server = new McpServer({ name: 'many', version: '1.0.0' });
    for (let index = 0; index < 13; index += 1) {
      server.registerTool(`tool_${index}`, {}, () => ({ content: [] }));
    }
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    client = new Client({ name: 'eager', version: '1.0.0' });
    const connecting = client.connect(clientTransport);

    const tools = await mcpTools(client);

    expect(tools).toHaveLength(13);
    await connecting;
  });

  it('refuses at once a client whose connect() fails while it waits, naming the closed connection', async () => {
    // A server process that exits before answering initialize.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['-e', 'process.exit(3)'],
    });
    const failing = new Client({ name: 'eager', version: '1.0.0' });
    const connecting = failing.connect(transport).catch((error: unknown) => error);
    const started = Date.now();

    const listing = mcpTools(failing, { connectTimeout: 60_000 });

    await expect(listing).rejects.toMatchObject({
      reason: 'connection-failed',
      message: expect.stringContaining('its transport closed') as string,
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await connecting).toBeInstanceOf(Error);
  });

  it('keeps the process alive while it waits for a client whose connect() failed, and rejects', async () => {
    // A transport whose start() fails leaves nothing running: the wait alone holds the process.
    const program = `
      import { Client } from '@modelcontextprotocol/sdk/client/index.js';
      import { mcpTools } from 'tooltrace/mcp';
      const refusing = {
        async start() { throw new Error('connection refused'); },
        async send() {},
        async close() {},
      };
      const client = new Client({ name: 'eager', version: '1.0.0' });
      client.connect(refusing).catch(() => {});
      try {
        await mcpTools(client, { connectTimeout: 200 });
      } catch (error) {
        console.log('refused:', error.reason);
      }`;

    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', program],
      { cwd: ROOT },
    );

    expect(stdout).toContain('refused: handshake-timeout');
  });

  it('refuses a client that was never connected, saying to connect it first', async () => {
    const fresh = new Client({ name: 'fresh', version: '1.0.0' });
    const listing = mcpTools(fresh);
    await expect(listing).rejects.toBeInstanceOf(McpNotConnectedError);
    await expect(listing).rejects.toMatchObject({
      reason: 'not-connected',
      message: expect.stringContaining('await client.connect(transport)') as string,
    });
  });
});
