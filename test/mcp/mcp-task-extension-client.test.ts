import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import {
  TOOL_RESULT,
  TOOL_STREAM_PROGRESS,
  type ToolResult,
  type ToolStreamProgress,
} from '../../src/events/index.js';
import { mcpTools, serveMcpTools, type McpServedTool } from '../../src/mcp/index.js';
import type { ToolEvent } from '../../src/streamtool/index.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';
import { startModernHttpServer, type ModernHttpServer } from './modern-http-server.js';

const TASKS = 'io.modelcontextprotocol/tasks';

let harness: TracingHarness | undefined;
let http: ModernHttpServer | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await http?.close();
  http = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** What the server side saw: each served call's result, and the tools' aborts. */
interface ServerSide {
  readonly results: ToolResult[];
  readonly aborted: string[];
}

/** Indexes in steps (each a progress note), asking first when told to; runs as a task. */
function tools(side: ServerSide): McpServedTool[] {
  return [
    {
      tool: {
        name: 'index_folder',
        async *stream(signal, input, context): AsyncGenerator<ToolEvent> {
          signal.addEventListener('abort', () => side.aborted.push('index_folder'));
          yield { kind: 'progress', progress: 0, payload: 'listing' };
          if (input.ask === true) {
            const answer = await context!.requestInput!({
              key: 'confirm',
              method: 'elicitation/create',
              params: { message: 'Index it?', requestedSchema: { type: 'object', properties: {} } },
            });
            if (answer.action !== 'accept') throw new Error('not confirmed');
          }
          const steps = Number(input.steps ?? 2);
          for (let step = 1; step <= steps; step += 1) {
            await sleep(Number(input.stepMs ?? 30), undefined, { signal });
            yield { kind: 'progress', progress: step / steps, payload: `step ${step}` };
          }
          yield { kind: 'complete', payload: { files: 12 } };
        },
      },
      description: 'Indexes a folder',
      inputSchema: {
        ask: z.boolean().optional(),
        steps: z.number().optional(),
        stepMs: z.number().optional(),
      },
      execution: { taskSupport: 'required' },
    },
    {
      tool: {
        name: 'broken_job',
        async *stream(): AsyncGenerator<ToolEvent> {
          yield { kind: 'progress', progress: 0, payload: 'starting' };
          await sleep(20);
          throw Object.assign(new Error('the index is corrupt'), { code: -32603 });
        },
      },
      execution: { taskSupport: 'optional' },
    },
  ];
}

async function serve(side: ServerSide, pollMs = 20): Promise<string> {
  const bus = new EventBus();
  bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void side.results.push(event.payload));
  http = await startModernHttpServer(() => {
    const server = new McpServer({ name: 'indexer', version: '2.0.0' });
    serveMcpTools(server, tools(side), { bus, taskPollInterval: pollMs });
    return server;
  });
  return http.url;
}

/** A 2.x client at MCP 2026-07-28 declaring the tasks extension (and elicitation). */
async function taskClient(url: string): Promise<Client> {
  const client = new Client(
    { name: 'agent', version: '2.0.0' },
    {
      capabilities: { elicitation: {}, extensions: { [TASKS]: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

function statuses(span: ReceivedSpan): string[] {
  return span.events
    .map((event) => event.attributes['tooltrace.mcp.task.status'])
    .filter((status): status is string => typeof status === 'string');
}

describe('mcpTools calling an MCP 2026-07-28 task server (the tasks extension)', () => {
  it('follows the task to its result as one call: one span, statuses as events, polls a count', async () => {
    harness = await startTracingHarness({ register: true });
    const side: ServerSide = { results: [], aborted: [] };
    const client = await taskClient(await serve(side));
    attachTools(harness.bus, await mcpTools(client, { taskMinPollInterval: 10 }));
    const progress: ToolStreamProgress[] = [];
    harness.bus.subscribe<ToolStreamProgress>(
      TOOL_STREAM_PROGRESS,
      (event) => void progress.push(event.payload),
    );

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'index_folder',
      arguments: { steps: 3 },
    });

    expect(result.error).toBeUndefined();
    expect(JSON.parse(result.output)).toEqual({
      content: [{ type: 'text', text: '{"files":12}' }],
      structuredContent: { files: 12 },
    });
    // The task's status messages reached the bus as the call's progress.
    const messages = progress.map(
      (event) => (event.payload as { statusMessage?: string } | undefined)?.statusMessage,
    );
    expect(messages).toContain('100% step 3');
    const spans = (await harness.spans(1)).filter(
      (span) => span.name === 'execute_tool index_folder',
    );
    expect(spans).toHaveLength(1);
    const [span] = spans;
    expect(span!.attributes).toMatchObject({
      'mcp.protocol.version': '2026-07-28',
      'tooltrace.mcp.task.status': 'completed',
    });
    expect(span!.attributes['tooltrace.mcp.task.id']).toEqual(expect.any(String));
    expect(span!.attributes['mcp.session.id']).toBeUndefined();
    const polls = span!.attributes['tooltrace.mcp.task.polls'] as number;
    expect(polls).toBeGreaterThanOrEqual(1);
    // Polls are counted, not recorded one by one: an event per status change only.
    expect(span!.events.length).toBeLessThan(polls + 5);
    expect(statuses(span!).at(0)).toBe('working');
    expect(statuses(span!).at(-1)).toBe('completed');
    expect(side.results).toHaveLength(1);
  });

  it('answers the questions a task waits on through the inputHandler, with tasks/update', async () => {
    harness = await startTracingHarness({ register: true });
    const side: ServerSide = { results: [], aborted: [] };
    const client = await taskClient(await serve(side));
    const asked: string[] = [];
    attachTools(
      harness.bus,
      await mcpTools(client, {
        taskMinPollInterval: 10,
        inputHandler: (question) => {
          asked.push(`${question.method} ${question.key}`);
          return { action: 'accept', content: {} };
        },
      }),
    );

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'index_folder',
      arguments: { ask: true, steps: 1 },
    });

    expect(result.error).toBeUndefined();
    expect(asked).toEqual(['elicitation/create confirm']);
    const [span] = (await harness.spans(1)).filter(
      (each) => each.name === 'execute_tool index_folder',
    );
    const input = span!.events
      .filter((event) => event.attributes['tooltrace.mcp.input.status'] !== undefined)
      .map((event) => event.attributes['tooltrace.mcp.input.status']);
    expect(input).toEqual(['requested', 'accepted']);
    expect(statuses(span!)).toContain('input_required');
    expect(span!.attributes['tooltrace.mcp.task.input_required']).toBe(true);
    expect(span!.attributes['tooltrace.mcp.input.rounds']).toBe(1);
  });

  it('fails at once, naming the option, when a task asks and there is no inputHandler; the task is cancelled', async () => {
    const side: ServerSide = { results: [], aborted: [] };
    const client = await taskClient(await serve(side));
    const bus = new EventBus();
    attachTools(bus, await mcpTools(client, { taskMinPollInterval: 10 }));

    const result = await callTool(bus, {
      id: 'tc_1',
      name: 'index_folder',
      arguments: { ask: true },
    });

    expect(result.error).toMatch(/asked for input \(elicitation\/create "confirm"\).*inputHandler/);
    await expect.poll(() => side.aborted).toEqual(['index_folder']);
  });

  it('sends tasks/cancel when the call is aborted: the served tool sees its signal abort', async () => {
    const side: ServerSide = { results: [], aborted: [] };
    const client = await taskClient(await serve(side));
    const [indexer] = await mcpTools(client, { taskMinPollInterval: 10 });
    const controller = new AbortController();
    const channel = await indexer!.stream(controller.signal, { steps: 100, stepMs: 1000 });
    let events = 0;
    for await (const event of channel) {
      void event;
      events += 1;
      // The task exists once its first status arrived.
      if (events === 1) controller.abort(new Error('the user stopped it'));
    }
    await expect.poll(() => side.aborted).toEqual(['index_folder']);
    expect(side.results.map((served) => served.error !== undefined)).toEqual([true]);
  });

  it('ends a task the server fails with the error it inlines (task_failed, its JSON-RPC code)', async () => {
    harness = await startTracingHarness({ register: true });
    const side: ServerSide = { results: [], aborted: [] };
    const client = await taskClient(await serve(side));
    attachTools(harness.bus, await mcpTools(client, { taskMinPollInterval: 10 }));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'broken_job', arguments: {} });

    expect(result.error).toContain('the index is corrupt');
    const [span] = (await harness.spans(1)).filter(
      (each) => each.name === 'execute_tool broken_job',
    );
    expect(span!.attributes).toMatchObject({
      'error.type': 'task_failed',
      'rpc.response.status_code': '-32603',
      'tooltrace.mcp.task.status': 'failed',
    });
  });

  it('gives up on a task still working at taskDeadline, cancels it, and says so', async () => {
    const side: ServerSide = { results: [], aborted: [] };
    const client = await taskClient(await serve(side));
    const bus = new EventBus();
    attachTools(bus, await mcpTools(client, { taskMinPollInterval: 10, taskDeadline: 150 }));

    const result = await callTool(bus, {
      id: 'tc_1',
      name: 'index_folder',
      arguments: { steps: 100, stepMs: 1000 },
    });

    expect(result.error).toMatch(/still "working" after 150 ms \(taskDeadline\); it was cancelled/);
    await expect.poll(() => side.aborted).toEqual(['index_folder']);
  });
});

describe('mcpTools calling a 2026-07-28 task server that misbehaves', () => {
  /** A server whose one tool answers with a task it scripts: each tasks/get the next status. */
  async function hostile(statuses: Record<string, unknown>[], created: Record<string, unknown>) {
    const polledAt: number[] = [];
    http = await startModernHttpServer(() => {
      const server = new McpServer({ name: 'hostile', version: '2.0.0' });
      server.registerTool(
        'scripted',
        { description: 'a scripted task' },
        () =>
          ({
            resultType: 'task',
            taskId: 'task-1',
            status: 'working',
            ...created,
          }) as never,
      );
      (
        server.server as unknown as {
          setRequestHandler(method: string, schemas: object, handler: () => unknown): void;
        }
      ).setRequestHandler(
        'tasks/get',
        {
          params: {
            '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) },
          },
        },
        () => {
          polledAt.push(performance.now());
          const next = statuses[Math.min(polledAt.length - 1, statuses.length - 1)]!;
          return { resultType: 'complete', taskId: 'task-1', ...next };
        },
      );
      return server;
    });
    return polledAt;
  }

  it('holds a pollIntervalMs of 0 to taskMinPollInterval, and refuses an unknown status by name', async () => {
    const polledAt = await hostile(
      [{ status: 'working' }, { status: 'working' }, { status: 'exploded' }],
      { pollIntervalMs: 0, ttlMs: 1e12 },
    );
    const client = await taskClient(http!.url);
    const bus = new EventBus();
    attachTools(bus, await mcpTools(client, { taskMinPollInterval: 40 }));

    const result = await callTool(bus, { id: 'tc_1', name: 'scripted', arguments: {} });

    expect(result.error).toMatch(/MCP task task-1 reported status "exploded"/);
    expect(polledAt).toHaveLength(3);
    // A timer never fires early: each poll waited at least the floor, whatever the server asked.
    for (let poll = 1; poll < polledAt.length; poll += 1) {
      expect(polledAt[poll]! - polledAt[poll - 1]!).toBeGreaterThanOrEqual(35);
    }
  });

  it('asks tasks/get for the result of a task created completed (a CreateTaskResult inlines none)', async () => {
    const polledAt = await hostile(
      [{ status: 'completed', result: { content: [{ type: 'text', text: 'at once' }] } }],
      { status: 'completed', pollIntervalMs: 10 },
    );
    const client = await taskClient(http!.url);
    const bus = new EventBus();
    attachTools(bus, await mcpTools(client, { taskMinPollInterval: 10 }));

    const result = await callTool(bus, { id: 'tc_1', name: 'scripted', arguments: {} });

    expect(result.error).toBeUndefined();
    expect(JSON.parse(result.output)).toEqual({ content: [{ type: 'text', text: 'at once' }] });
    expect(polledAt).toHaveLength(1);
  });

  it('fails a task that completes without a result, naming it', async () => {
    await hostile([{ status: 'completed' }], { pollIntervalMs: 10 });
    const client = await taskClient(http!.url);
    const bus = new EventBus();
    attachTools(bus, await mcpTools(client, { taskMinPollInterval: 10 }));

    const result = await callTool(bus, { id: 'tc_1', name: 'scripted', arguments: {} });

    expect(result.error).toBe('MCP task task-1 completed without a result object');
  });

  it('ends at the task’s ttlMs when it is shorter than taskDeadline: the server forgets it then', async () => {
    await hostile([{ status: 'working' }], { pollIntervalMs: 10, ttlMs: 120 });
    const client = await taskClient(http!.url);
    const bus = new EventBus();
    attachTools(bus, await mcpTools(client, { taskMinPollInterval: 10 }));

    const result = await callTool(bus, { id: 'tc_1', name: 'scripted', arguments: {} });

    expect(result.error).toMatch(/still "working" after 120 ms \(the task's ttlMs\)/);
  });
});
