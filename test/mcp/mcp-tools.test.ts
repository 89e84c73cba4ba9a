import { setImmediate as nextTurn } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools, McpToolError } from '../../src/mcp/index.js';
import { bridge } from '../../src/streamtool/index.js';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_RESULT, type ToolResult } from '../../src/events/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
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

/** A server written with the SDK alone: a tool that reports progress three times. */
function progressServer(seen: { meta?: Record<string, unknown> }): McpServer {
  const server = new McpServer({ name: 'files', version: '1.0.0' });
  server.registerTool(
    'index_files',
    { description: 'Indexes the files of a folder' },
    async (extra) => {
      seen.meta = extra._meta;
      const progressToken = extra._meta?.progressToken;
      for (const [step, message] of ['listing', 'reading', 'indexing'].entries()) {
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step + 1, total: 3, message },
          });
        }
      }
      return { content: [{ type: 'text', text: '120 files' }], structuredContent: { files: 120 } };
    },
  );
  server.registerTool('broken', { description: 'Always fails' }, () => ({
    content: [{ type: 'text', text: 'disk not mounted' }],
    isError: true,
  }));
  return server;
}

describe('mcpTools()', () => {
  it('lists the tools a server has, named and described as the server says', async () => {
    client = await connectInMemory(progressServer({}));
    const tools = await mcpTools(client);
    expect(tools.map((tool) => [tool.name, tool.definition.description])).toEqual([
      ['index_files', 'Indexes the files of a folder'],
      ['broken', 'Always fails'],
    ]);
  });

  it('gives three progress notifications as three progress events of an execute_tool span with the MCP attributes, and the server the span as traceparent', async () => {
    harness = await startTracingHarness({ register: true });
    const seen: { meta?: Record<string, unknown> } = {};
    client = await connectInMemory(progressServer(seen));
    attachTools(harness.bus, await mcpTools(client));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'index_files', arguments: {} });

    expect(JSON.parse(result.output)).toEqual({
      content: [{ type: 'text', text: '120 files' }],
      structuredContent: { files: 120 },
    });
    const span = await harness.span('execute_tool index_files');
    const progress = span.events.filter((event) => event.name === 'tool.stream.progress');
    expect(progress.map((event) => event.attributes['tooltrace.stream.progress'])).toEqual([
      1 / 3,
      2 / 3,
      1,
    ]);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.description': 'Indexes the files of a folder',
      'jsonrpc.request.id': expect.stringMatching(/^\d+$/) as string,
    });
    expect(span.status.code).toBe(1);
    expect(seen.meta?.traceparent).toBe(`00-${span.traceId}-${span.spanId}-01`);
  });

  it('fails the call on an isError result: status ERROR, error.type=tool_error, the text as message', async () => {
    harness = await startTracingHarness({ register: true });
    client = await connectInMemory(progressServer({}));
    attachTools(harness.bus, await mcpTools(client));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'broken', arguments: {} });

    expect(result).toMatchObject({ error: 'disk not mounted', errorType: 'tool_error' });
    const span = await harness.span('execute_tool broken');
    expect(span.status).toEqual({ code: 2, message: 'disk not mounted' });
    expect(span.attributes['error.type']).toBe('tool_error');
  });

  it('rejects with McpToolError, whose content is what the server sent', async () => {
    client = await connectInMemory(progressServer({}));
    const [, broken] = await mcpTools(client);
    const failure = bridge(new EventBus(), broken!, { id: 'tc_1', name: 'broken', arguments: {} });
    await expect(failure).rejects.toBeInstanceOf(McpToolError);
    await expect(failure).rejects.toMatchObject({
      toolName: 'broken',
      content: [{ type: 'text', text: 'disk not mounted' }],
    });
  });

  it('fails the call on a JSON-RPC error with its code as error.type, and reads every page of tools/list', async () => {
    harness = await startTracingHarness({ register: true });
    const server = new Server({ name: 'low', version: '1.0.0' }, { capabilities: { tools: {} } });
    const pages: Record<
      string,
      { tools: { name: string; inputSchema: { type: 'object' } }[]; nextCursor?: string }
    > = {
      first: { tools: [{ name: 'strict', inputSchema: { type: 'object' } }], nextCursor: 'second' },
      second: { tools: [{ name: 'other', inputSchema: { type: 'object' } }] },
    };
    server.setRequestHandler(
      ListToolsRequestSchema,
      (request) => pages[request.params?.cursor ?? 'first']!,
    );
    server.setRequestHandler(CallToolRequestSchema, () => {
      throw new McpError(ErrorCode.InvalidParams, 'path must be absolute');
    });
    client = await connectInMemory(server);
    const tools = await mcpTools(client);
    expect(tools.map((tool) => tool.name)).toEqual(['strict', 'other']);
    attachTools(harness.bus, tools);

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'strict', arguments: {} });

    expect(result.error).toContain('path must be absolute');
    const span = await harness.span('execute_tool strict');
    expect(span.attributes).toMatchObject({
      'error.type': '-32602',
      'rpc.response.status_code': '-32602',
    });
  });

  it("cancels the request when the call's signal aborts: the server's handler sees its signal abort", async () => {
    const server = new McpServer({ name: 'slow', version: '1.0.0' });
    let aborted: (reason: unknown) => void = () => {};
    const serverSawAbort = new Promise((resolve) => (aborted = resolve));
    server.registerTool('wait', {}, (extra) => {
      return new Promise((_, reject) => {
        extra.signal.addEventListener('abort', () => {
          aborted(extra.signal.reason);
          reject(new Error('stopped'));
        });
      });
    });
    client = await connectInMemory(server);
    const [wait] = await mcpTools(client);
    const bus = new EventBus();
    const results: ToolResult[] = [];
    bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
    const controller = new AbortController();
    const call = bridge(
      bus,
      wait!,
      { id: 'tc_1', name: 'wait', arguments: {} },
      { signal: controller.signal },
    );
    await nextTurn();
    controller.abort(new Error('user pressed stop'));

    await expect(call).rejects.toThrow('user pressed stop');
    await serverSawAbort;
    expect(results).toMatchObject([{ cancelled: true, error: 'user pressed stop' }]);
  });
});
