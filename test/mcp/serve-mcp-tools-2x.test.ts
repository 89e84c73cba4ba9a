import { setTimeout as sleep } from 'node:timers/promises';
import { Client as Client2 } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_RESULT, type ToolResult } from '../../src/events/index.js';
import { mcpTools, serveMcpTools } from '../../src/mcp/index.js';
import { traceToolCalls, type ToolCallTracing } from '../../src/otel/index.js';
import type { ChannelTool, ToolEvent } from '../../src/streamtool/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';

/** What a test needs of either line's client: the calls it makes itself, closing. */
interface AnyClient {
  close(): Promise<void>;
}

let harness: TracingHarness | undefined;
let serverTracing: ToolCallTracing | undefined;
let client: AnyClient | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await serverTracing?.shutdown();
  serverTracing = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** A tool whose progress repeats a fraction and forgets it, then stops when `stuck` says so. */
function indexFiles(seen: { aborted?: unknown; started?: () => void }): ChannelTool {
  return {
    name: 'index_files',
    async *stream(signal, input): AsyncGenerator<ToolEvent> {
      signal.addEventListener('abort', () => void (seen.aborted = signal.reason as unknown), {
        once: true,
      });
      seen.started?.();
      for (const progress of [0.25, 0.25, undefined, 0.5]) {
        await sleep(1);
        yield { kind: 'progress', progress };
      }
      yield { kind: 'partial', payload: `${String(input.folder)}: 60 files` };
      if (input.stuck === true) await sleep(10_000, undefined, { signal });
      if (input.folder === 'missing') throw new Error('folder not found');
      yield { kind: 'complete', payload: { folder: input.folder, files: 120 } };
    },
  };
}

/** A 2.x `McpServer` serving `index_files` on `bus`. */
function indexServer(bus: EventBus, seen: { aborted?: unknown; started?: () => void }) {
  const server = new McpServer({ name: 'files', version: '2.0.0' });
  const registered = serveMcpTools(
    server,
    [
      {
        tool: indexFiles(seen),
        description: 'Indexes the files of a folder',
        inputSchema: { folder: z.string(), stuck: z.boolean().optional() },
      },
    ],
    { bus },
  );
  return { server, registered };
}

type Line = '1.x' | '2.x';

/** A client of `line` connected to `server` over the 2.x line's in-memory transport pair. */
async function connect(line: Line, server: McpServer): Promise<Client1 | Client2> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const connected =
    line === '2.x'
      ? new Client2({ name: 'agent', version: '2.0.0' })
      : new Client1({ name: 'agent', version: '1.0.0' });
  // A transport is a shape (start, send, close, onmessage): the lines' pairs are alike.
  await Promise.all([
    server.connect(serverTransport),
    connected.connect(clientTransport as Parameters<Client1['connect']>[0]),
  ]);
  client = connected;
  return connected;
}

/** One plain `tools/call` on either line, the progress notifications it received. */
async function callWithProgress(
  line: Line,
  connected: Client1 | Client2,
  params: { name: string; arguments: Record<string, unknown> },
  signal?: AbortSignal,
): Promise<{ result: unknown; progress: { progress: number; total?: number }[] }> {
  const progress: { progress: number; total?: number }[] = [];
  const onprogress = (note: { progress: number; total?: number }) => void progress.push(note);
  const result =
    line === '2.x'
      ? await (connected as Client2).callTool(params, { onprogress, signal })
      : await (connected as Client1).callTool(params, undefined, { onprogress, signal });
  return { result, progress };
}

describe.each<Line>(['2.x', '1.x'])(
  'serveMcpTools() on the 2.x McpServer, called by a %s Client',
  (line) => {
    it('registers each tool on the 2.x server, listed with its description and schema', async () => {
      const { server, registered } = indexServer(new EventBus(), {});
      expect(registered).toHaveLength(1);
      const connected = await connect(line, server);
      const { tools } = await connected.listTools();
      expect(tools).toMatchObject([
        {
          name: 'index_files',
          description: 'Indexes the files of a folder',
          inputSchema: { type: 'object', properties: { folder: { type: 'string' } } },
        },
      ]);
    });

    it('answers a plain call with the final payload, its progress strictly increasing with the fraction as progress/total', async () => {
      const { server } = indexServer(new EventBus(), {});
      const connected = await connect(line, server);

      const { result, progress } = await callWithProgress(line, connected, {
        name: 'index_files',
        arguments: { folder: 'src' },
      });

      expect(result).toEqual({
        content: [{ type: 'text', text: '{"folder":"src","files":120}' }],
        structuredContent: { folder: 'src', files: 120 },
      });
      // 0.25, 0.25, unknown, 0.5, then the partial: five notifications, 1 to 5.
      expect(progress.map((note) => note.progress)).toEqual([1, 2, 3, 4, 5]);
      expect(progress.map((note) => note.progress / note.total!)).toEqual([
        0.25, 0.25, 0.25, 0.5, 0.5,
      ]);
    });

    it('answers a failing tool with isError and its message', async () => {
      const { server } = indexServer(new EventBus(), {});
      const connected = await connect(line, server);
      const { result } = await callWithProgress(line, connected, {
        name: 'index_files',
        arguments: { folder: 'missing' },
      });
      expect(result).toEqual({
        content: [{ type: 'text', text: 'folder not found' }],
        isError: true,
      });
    });

    it('draws one trace through mcpTools: the served span a child of the client span, both with the request id that went over the wire', async () => {
      harness = await startTracingHarness({ register: true });
      const serverBus = new EventBus();
      serverTracing = traceToolCalls(serverBus, { tracerProvider: harness.provider });
      const { server } = indexServer(serverBus, {});
      attachTools(harness.bus, await mcpTools(await connect(line, server)));

      const answer = await callTool(harness.bus, {
        id: 'tc_1',
        name: 'index_files',
        arguments: { folder: 'src' },
      });

      expect(JSON.parse(answer.output)).toMatchObject({
        structuredContent: { folder: 'src', files: 120 },
      });
      await serverTracing.forceFlush();
      const spans = await harness.spans(2);
      const clientSpan = spans.find((span) => span.attributes['gen_ai.tool.call.id'] === 'tc_1')!;
      const servedSpan = spans.find((span) => span !== clientSpan)!;
      expect(servedSpan.name).toBe('execute_tool index_files');
      expect(servedSpan.traceId).toBe(clientSpan.traceId);
      expect(servedSpan.parentSpanId).toBe(clientSpan.spanId);
      expect(clientSpan.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.description': 'Indexes the files of a folder',
      });
      expect(clientSpan.attributes['jsonrpc.request.id']).toMatch(/^\d+$/);
      expect(servedSpan.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'jsonrpc.request.id': clientSpan.attributes['jsonrpc.request.id'],
        'gen_ai.tool.description': 'Indexes the files of a folder',
      });
      expect(servedSpan.status.code).toBe(1);
      const named = (span: typeof clientSpan, name: string) =>
        span.events.filter((event) => event.name === name).length;
      // Served: four progress events and a partial; the client sees five notifications.
      expect([
        named(servedSpan, 'tool.stream.progress'),
        named(servedSpan, 'tool.stream.partial'),
      ]).toEqual([4, 1]);
      expect(named(clientSpan, 'tool.stream.progress')).toBe(5);
    });

    it('aborts the served tool when the client cancels: its tool.result is cancelled', async () => {
      const serverBus = new EventBus();
      const results: ToolResult[] = [];
      serverBus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
      let started: () => void = () => {};
      const toolStarted = new Promise<void>((resolve) => (started = resolve));
      const seen: { aborted?: unknown; started?: () => void } = { started };
      const { server } = indexServer(serverBus, seen);
      const connected = await connect(line, server);
      const controller = new AbortController();

      const call = callWithProgress(
        line,
        connected,
        { name: 'index_files', arguments: { folder: 'src', stuck: true } },
        controller.signal,
      );
      const rejected = expect(call).rejects.toThrow('user pressed stop');
      await toolStarted;
      controller.abort('user pressed stop');

      await rejected;
      while (results.length === 0) await sleep(5);
      expect(seen.aborted).toBeDefined();
      expect(results).toMatchObject([{ name: 'index_files', cancelled: true }]);
    });
  },
);

describe('serveMcpTools() on the 2.x McpServer', () => {
  it('serves a task tool as the MCP 2026-07-28 tasks extension: listed with its taskSupport, the extension declared', async () => {
    const server = new McpServer({ name: 'research', version: '2.0.0' });
    serveMcpTools(server, [{ tool: indexFiles({}), execution: { taskSupport: 'required' } }]);
    const connected = (await connect('2.x', server)) as Client2;
    const { tools } = await connected.listTools();
    expect(tools).toMatchObject([{ name: 'index_files', execution: { taskSupport: 'required' } }]);
    expect(connected.getServerCapabilities()).toMatchObject({
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
  });

  it('continues the trace context a plain 2.x client sends in params._meta', async () => {
    harness = await startTracingHarness({ register: true });
    const { server } = indexServer(harness.bus, {});
    const connected = (await connect('2.x', server)) as Client2;
    await connected.callTool({
      name: 'index_files',
      arguments: { folder: 'src' },
      _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    const span = await harness.span('execute_tool index_files');
    expect(span.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span.parentSpanId).toBe('b7ad6b7169203331');
  });
});
