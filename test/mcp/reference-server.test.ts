import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_STREAM_PROGRESS, type ToolStreamProgress } from '../../src/events/index.js';
import { mcpTools } from '../../src/mcp/index.js';
import type { StreamingToolPlugin } from '../../src/streamtool/index.js';
import { spanOfCall, startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';

/** The reference server, `@modelcontextprotocol/server-everything`, over stdio. */
const SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

let harness: TracingHarness;
let client: Client;
let plugins: StreamingToolPlugin[];

beforeAll(async () => {
  harness = await startTracingHarness({ register: true, tracing: { captureContent: true } });
  client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [SERVER, 'stdio'],
      env: { PATH: process.env.PATH ?? '' },
      stderr: 'ignore',
    }),
  );
  plugins = attachTools(harness.bus, await mcpTools(client, { taskPollInterval: 250 }));
});

afterAll(async () => {
  await client.close();
  await harness.close();
  resetGlobals();
});

describe('the reference server (server-everything) through mcpTools, over stdio', () => {
  it('calls its task tool simulate-research-query as one span: its four stages as status events, the report as result', async () => {
    const result = await callTool(harness.bus, {
      id: 'tc_research',
      name: 'simulate-research-query',
      arguments: { topic: 'otters' },
    });

    expect(result.error).toBeUndefined();
    expect(result.output).toContain('Research Report: otters');
    const span = await harness.span('execute_tool simulate-research-query');
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'network.transport': 'pipe',
      'tooltrace.mcp.task.status': 'completed',
      'tooltrace.mcp.task.id': expect.any(String) as string,
      'jsonrpc.request.id': expect.stringMatching(/^\d+$/) as string,
    });
    const stages = span.events
      .filter((event) => event.name === 'tool.stream.progress')
      .map((event) => JSON.stringify(event.attributes['tooltrace.stream.payload'] ?? ''));
    // Status messages are sampled by polling: a loaded machine can poll past a 1 s stage, so the
    // stages seen must come in the server's order, and more than one of them must be seen.
    const order = ['Gathering sources', 'Analyzing content', 'Generating report'];
    const seen = stages
      .map((text) => order.findIndex((stage) => text.includes(stage)))
      .filter((index) => index >= 0);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBeGreaterThanOrEqual(2);
  }, 15_000);

  it('gives its long-running operation its progress events, and cancels it', async () => {
    const result = await callTool(harness.bus, {
      id: 'tc_long',
      name: 'trigger-long-running-operation',
      arguments: { duration: 0.3, steps: 3 },
    });
    expect(result.error).toBeUndefined();
    const span = await harness.span('execute_tool trigger-long-running-operation');
    const fractions = span.events
      .filter((event) => event.name === 'tool.stream.progress')
      .map((event) => event.attributes['tooltrace.stream.progress']);
    expect(fractions.length).toBeGreaterThanOrEqual(2);
    expect(fractions.slice(0, 2)).toEqual([1 / 3, 2 / 3]);

    const cancelled = callTool(harness.bus, {
      id: 'tc_cancel',
      name: 'trigger-long-running-operation',
      arguments: { duration: 30, steps: 3 },
    });
    await sleep(200);
    const plugin = plugins.find((each) => each.toolName === 'trigger-long-running-operation')!;
    await plugin.shutdown();
    expect(await cancelled).toMatchObject({ cancelled: true });
  }, 15_000);

  it("cancels its task tool's task when the call is cancelled: the server's task ends cancelled, the span cancelled", async () => {
    const running = new Promise<void>((resolve) => {
      const off = harness.bus.subscribe<ToolStreamProgress>(TOOL_STREAM_PROGRESS, (event) => {
        if (event.payload.tool_id !== 'tc_stop') return;
        off();
        resolve();
      });
    });
    const cancelled = callTool(harness.bus, {
      id: 'tc_stop',
      name: 'simulate-research-query',
      arguments: { topic: 'newts' },
    });
    await running; // the task exists: its first status is in
    const plugin = plugins.find((each) => each.toolName === 'simulate-research-query')!;

    await plugin.shutdown();

    expect(await cancelled).toMatchObject({ cancelled: true });
    const span = spanOfCall(await harness.spans(1), 'tc_stop');
    expect(span.attributes['tooltrace.tool.cancelled']).toBe(true);
    const taskId = String(span.attributes['tooltrace.mcp.task.id']);
    let status = '';
    for (let tries = 0; tries < 100 && status !== 'cancelled'; tries += 1) {
      status = (await client.experimental.tasks.getTask(taskId)).status;
      if (status !== 'cancelled') await sleep(20);
    }
    expect(status).toBe('cancelled');
  }, 15_000);
});
