import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_RESULT, type ToolResult } from '../../src/events/index.js';
import { serveMcpTools, type McpServedTool } from '../../src/mcp/index.js';
import type { ToolEvent } from '../../src/streamtool/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { resetGlobals } from './mcp-harness.js';
import { startModernHttpServer, type ModernHttpServer } from './modern-http-server.js';

let harness: TracingHarness | undefined;
let http: ModernHttpServer | undefined;

afterEach(async () => {
  await http?.close();
  http = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

const TASKS = 'io.modelcontextprotocol/tasks';

/**
 * Indexes a folder in steps; asks to go on (after a first note, `ask`; as its very first act,
 * `askFirst`) when told to, the answer's `name` in its result; stops when its signal aborts.
 */
const indexer: McpServedTool = {
  tool: {
    name: 'index_folder',
    async *stream(signal, input, context): AsyncGenerator<ToolEvent> {
      let by = '';
      if (input.ask === true || input.askFirst === true) {
        if (input.ask === true) yield { kind: 'progress', progress: 0, payload: 'looking' };
        const answer = await context!.requestInput!({
          key: 'confirm',
          method: 'elicitation/create',
          params: { message: 'Index it?', requestedSchema: { type: 'object', properties: {} } },
        });
        if (answer.action !== 'accept') throw new Error('not confirmed');
        const name = (answer.content as { name?: unknown } | undefined)?.name;
        by = typeof name === 'string' ? name : '';
      }
      for (const step of [1, 2]) {
        yield { kind: 'progress', progress: step / 2, payload: `step ${step}` };
        await sleep(Number(input.stepMs ?? 20), undefined, { signal });
      }
      yield { kind: 'complete', payload: by === '' ? { files: 12 } : { files: 12, by } };
    },
  },
  inputSchema: {
    ask: z.boolean().optional(),
    askFirst: z.boolean().optional(),
    stepMs: z.number().optional(),
  },
  execution: { taskSupport: 'required' },
};

/** One JSON-RPC request at MCP 2026-07-28, with `capabilities` in `_meta`. */
async function rpc(
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = { elicitation: {}, extensions: { [TASKS]: {} } },
): Promise<{ result?: Record<string, unknown>; error?: { code: number; data?: unknown } }> {
  const name = typeof params.name === 'string' ? params.name : params.taskId;
  const response = await fetch(http!.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return JSON.parse(data) as { result?: Record<string, unknown>; error?: { code: number } };
}

async function until(
  taskId: string,
  status: string,
  also: (task: Record<string, unknown>) => boolean = () => true,
): Promise<Record<string, unknown>> {
  for (let poll = 0; poll < 200; poll += 1) {
    const { result } = await rpc('tasks/get', { taskId });
    if (result?.status === status && also(result)) return result;
    await sleep(10);
  }
  throw new Error(`task ${taskId} never reached ${status}`);
}

async function serve(bus: EventBus): Promise<void> {
  http = await startModernHttpServer(() => {
    const server = new McpServer({ name: 'files', version: '2.0.0' });
    serveMcpTools(server, [indexer], { bus, taskPollInterval: 100 });
    return server;
  });
}

describe('serveMcpTools() on a 2.x McpServer: the MCP 2026-07-28 tasks extension', () => {
  it('answers tools/call with a task, tells its progress as statusMessage, inlines the result: one span from creation to the end', async () => {
    harness = await startTracingHarness();
    await serve(harness.bus);
    const created = await rpc('tools/call', { name: 'index_folder', arguments: { stepMs: 400 } });
    expect(created.result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 300_000,
      pollIntervalMs: 100,
    });
    const taskId = created.result!.taskId as string;
    const working = await until(taskId, 'working', (task) => task.statusMessage !== undefined);
    expect(working.statusMessage).toMatch(/^(50|100)% step [12]$/);
    const done = await until(taskId, 'completed');
    expect(done.result).toMatchObject({ structuredContent: { files: 12 } });
    const span = await harness.span('execute_tool index_folder');
    expect(span.status.code).toBe(1);
    expect(span.events.filter((event) => event.name === 'tool.stream.progress')).toHaveLength(2);
  });

  it('parks the task input_required with the questions, and goes on after tasks/update', async () => {
    harness = await startTracingHarness();
    await serve(harness.bus);
    const created = await rpc('tools/call', { name: 'index_folder', arguments: { ask: true } });
    const taskId = created.result!.taskId as string;
    const parked = await until(taskId, 'input_required');
    expect(parked.inputRequests).toMatchObject({
      confirm: { method: 'elicitation/create', params: { message: 'Index it?' } },
    });
    const ack = await rpc('tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: {} } },
    });
    expect(ack.result).toMatchObject({ resultType: 'complete' });
    expect(ack.result).not.toHaveProperty('status');
    await until(taskId, 'completed');
    const span = await harness.span('execute_tool index_folder');
    expect(
      span.events
        .map((event) => event.attributes['tooltrace.mcp.input.status'])
        .filter((status) => status !== undefined),
    ).toEqual(['requested', 'accepted']);
  });

  it('asks a tool’s first questions in input_required rounds of tools/call, then answers with the task (SEP-2322 before SEP-2663)', async () => {
    harness = await startTracingHarness();
    await serve(harness.bus);
    const first = await rpc('tools/call', { name: 'index_folder', arguments: { askFirst: true } });
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    expect(first.result).not.toHaveProperty('taskId');
    const second = await rpc('tools/call', {
      name: 'index_folder',
      arguments: { askFirst: true },
      inputResponses: { confirm: { action: 'accept', content: { name: 'Alice' } } },
      requestState: first.result!.requestState,
    });
    expect(second.result).toMatchObject({ resultType: 'task', status: 'working' });
    expect(second.result).not.toHaveProperty('requestState');
    expect(second.result).not.toHaveProperty('inputRequests');
    const done = await until(second.result!.taskId as string, 'completed');
    expect(done.result).toMatchObject({ structuredContent: { files: 12, by: 'Alice' } });
    // One call, one span: the round and the task.
    const span = await harness.span('execute_tool index_folder');
    expect(
      span.events
        .map((event) => event.attributes['tooltrace.mcp.input.status'])
        .filter((status) => status !== undefined),
    ).toEqual(['requested', 'accepted']);
  });

  it('makes a task at once of a tool that waits before it streams or asks: the request is not held', async () => {
    const quiet: McpServedTool = {
      tool: {
        name: 'quiet_job',
        async *stream(signal): AsyncGenerator<ToolEvent> {
          await sleep(300, undefined, { signal });
          yield { kind: 'complete', payload: 'done quietly' };
        },
      },
      execution: { taskSupport: 'required' },
    };
    http = await startModernHttpServer(() => {
      const server = new McpServer({ name: 'quiet', version: '2.0.0' });
      serveMcpTools(server, [quiet], { taskPollInterval: 100 });
      return server;
    });
    const created = await rpc('tools/call', { name: 'quiet_job', arguments: {} });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await until(created.result!.taskId as string, 'completed');
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'done quietly' }] });
  });

  it('cancels cooperatively: tasks/cancel is acked at once and aborts the tool, its call cancelled', async () => {
    const bus = new EventBus();
    const results: ToolResult[] = [];
    bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
    await serve(bus);
    const created = await rpc('tools/call', {
      name: 'index_folder',
      arguments: { stepMs: 10_000 },
    });
    const taskId = created.result!.taskId as string;
    await until(taskId, 'working');
    expect((await rpc('tasks/cancel', { taskId })).result).toMatchObject({
      resultType: 'complete',
    });
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' });
    await sleep(50);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ cancelled: true });
    expect(results[0]!.error).toContain('tasks/cancel');
  });

  it('refuses a required task tool and the task methods with -32021 when the client did not declare the extension', async () => {
    await serve(new EventBus());
    const refused = await rpc('tools/call', { name: 'index_folder', arguments: {} }, {});
    expect(refused.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    expect((await rpc('tasks/get', { taskId: 'x' }, {})).error).toMatchObject({ code: -32021 });
    expect((await rpc('tasks/get', { taskId: 'nope' })).error).toMatchObject({ code: -32602 });
  });
});
