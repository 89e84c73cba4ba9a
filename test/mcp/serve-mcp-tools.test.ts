import { setImmediate as nextTurn } from 'node:timers/promises';
import { context, propagation, trace } from '@opentelemetry/api';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_RESULT, type ToolResult } from '../../src/events/index.js';
import { serveMcpTools } from '../../src/mcp/index.js';
import type { ChannelTool, ToolEvent } from '../../src/streamtool/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { connectInMemory, resetGlobals } from './mcp-harness.js';

let harness: TracingHarness | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** A tooltrace tool: four progress events and two partials, then a summary. */
const countFiles: ChannelTool = {
  name: 'count_files',
  async *stream(_signal, input): AsyncGenerator<ToolEvent> {
    const folder = String(input.folder);
    for (let step = 1; step <= 4; step += 1) {
      await nextTurn(); // work takes time
      yield { kind: 'progress', progress: step / 4 };
      if (step % 2 === 0) yield { kind: 'partial', payload: `${folder}: ${step * 10} files` };
    }
    yield { kind: 'complete', payload: { folder, files: 40 } };
  },
};

const served = {
  tool: countFiles,
  description: 'Counts the files in a folder',
  inputSchema: { folder: z.string() },
};

describe('serveMcpTools()', () => {
  it('lists each tool with its description and input schema', async () => {
    const server = new McpServer({ name: 'files', version: '1.0.0' });
    serveMcpTools(server, [served]);
    client = await connectInMemory(server);
    const { tools } = await client.listTools();
    expect(tools).toMatchObject([
      {
        name: 'count_files',
        description: 'Counts the files in a folder',
        inputSchema: { type: 'object', properties: { folder: { type: 'string' } } },
      },
    ]);
  });

  it('sends four progress events as progress notifications to a plain MCP client, partials as their messages, and the final payload as the result', async () => {
    const server = new McpServer({ name: 'files', version: '1.0.0' });
    serveMcpTools(server, [served]);
    client = await connectInMemory(server);
    const notifications: Progress[] = [];

    const result = await client.callTool(
      { name: 'count_files', arguments: { folder: 'src' } },
      undefined,
      {
        onprogress: (progress) => void notifications.push(progress),
      },
    );

    // progress counts the notifications (strictly increasing, as MCP requires); the fraction
    // is progress/total.
    expect(notifications.map((note) => note.progress)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(notifications.map((note) => [note.progress / note.total!, note.message ?? ''])).toEqual([
      [0.25, ''],
      [0.5, ''],
      [0.5, 'src: 20 files'],
      [0.75, ''],
      [1, ''],
      [1, 'src: 40 files'],
    ]);
    expect(result).toEqual({
      content: [{ type: 'text', text: '{"folder":"src","files":40}' }],
      structuredContent: { folder: 'src', files: 40 },
    });
  });

  it("emits each call on the bus, its span continuing the client's traceparent from params._meta", async () => {
    harness = await startTracingHarness({ register: true });
    const server = new McpServer({ name: 'files', version: '1.0.0' });
    serveMcpTools(server, [served], { bus: harness.bus });
    client = await connectInMemory(server);

    // A plain client with its own tracing: it sends its span's context in params._meta.
    const clientSpan = trace.getTracer('plain-client').startSpan('agent step');
    const meta: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), clientSpan), meta);
    await client.callTool({ name: 'count_files', arguments: { folder: 'src' }, _meta: meta });
    clientSpan.end();

    const span = await harness.span('execute_tool count_files');
    expect(span.traceId).toBe(clientSpan.spanContext().traceId);
    expect(span.parentSpanId).toBe(clientSpan.spanContext().spanId);
    expect(span.events.filter((event) => event.name === 'tool.stream.progress')).toHaveLength(4);
    expect(span.events.filter((event) => event.name === 'tool.stream.partial')).toHaveLength(2);
    expect(span.attributes).toMatchObject({
      'gen_ai.tool.description': 'Counts the files in a folder',
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': expect.stringMatching(/^\d+$/) as string,
    });
    expect(span.status.code).toBe(1);
  });

  it('answers a failing tool with isError and its message', async () => {
    const failing: ChannelTool = {
      name: 'fails',
      // eslint-disable-next-line require-yield
      async *stream() {
        await nextTurn();
        throw new Error('folder not found');
      },
    };
    const server = new McpServer({ name: 'files', version: '1.0.0' });
    serveMcpTools(server, [failing]);
    client = await connectInMemory(server);
    expect(await client.callTool({ name: 'fails', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'folder not found' }],
      isError: true,
    });
  });

  it("aborts the tool when the client cancels, and the call's tool.result is cancelled", async () => {
    const bus = new EventBus();
    const results: ToolResult[] = [];
    bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
    let started: () => void = () => {};
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    let stopped: (reason: unknown) => void = () => {};
    const toolStopped = new Promise((resolve) => (stopped = resolve));
    const stuck: ChannelTool = {
      name: 'stuck',
      async *stream(signal): AsyncGenerator<ToolEvent> {
        started();
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        stopped(signal.reason);
        yield { kind: 'complete', payload: 'too late' };
      },
    };
    const server = new McpServer({ name: 'files', version: '1.0.0' });
    serveMcpTools(server, [stuck], { bus });
    client = await connectInMemory(server);
    const controller = new AbortController();
    const call = client.callTool({ name: 'stuck', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    const rejected = expect(call).rejects.toThrow('user pressed stop');
    await toolStarted;
    controller.abort('user pressed stop');

    await rejected;
    await toolStopped;
    expect(results).toMatchObject([{ name: 'stuck', cancelled: true }]);
  });
});
