import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_INVOKE } from '../../src/events/index.js';
import { mcpTools, serveMcpTools } from '../../src/mcp/index.js';
import { traceToolCalls } from '../../src/otel/index.js';
import type { ChannelTool, StreamingToolPlugin } from '../../src/streamtool/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';

/** The test's own server polls fast (30 ms): trusted, it may go below the 100 ms floor. */
const OWN_SERVER = { taskMinPollInterval: 10 };
let harness: TracingHarness | undefined;
let client: Client | undefined;
let taskStore: InMemoryTaskStore | undefined;

afterEach(async () => {
  // The store keeps a timer per task until its ttl; cleanup() clears them.
  taskStore?.cleanup();
  taskStore = undefined;
  await client?.close();
  client = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** A tooltrace tool that reports three stages, then its report; stopped by its signal. */
function researchTool(seen: { aborted?: unknown }): ChannelTool {
  return {
    name: 'research',
    async *stream(signal, input) {
      signal.addEventListener(
        'abort',
        () => {
          seen.aborted = signal.reason as unknown;
        },
        { once: true },
      );
      for (const stage of ['gathering', 'analyzing', 'writing']) {
        await sleep(40, undefined, { signal });
        yield { kind: 'progress', payload: stage };
      }
      if (input.topic === 'forbidden') {
        yield { kind: 'error', error: new Error('topic refused') };
        return;
      }
      yield { kind: 'complete', payload: { report: `all about ${String(input.topic)}` } };
    },
  };
}

/** An McpServer with the SDK's task store and tasks capability, serving `research` as a task. */
async function connectTaskServer(
  serverBus: EventBus,
  seen: { aborted?: unknown },
  sent: string[],
): Promise<Client> {
  const server = new McpServer(
    { name: 'research', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: (taskStore = new InMemoryTaskStore()),
    },
  );
  serveMcpTools(
    server,
    [
      {
        tool: researchTool(seen),
        description: 'Researches a topic',
        inputSchema: { topic: z.string() },
        execution: { taskSupport: 'required' },
      },
    ],
    { bus: serverBus, taskPollInterval: 30 },
  );
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const send = clientTransport.send.bind(clientTransport);
  clientTransport.send = (message, options) => {
    if ('method' in message) sent.push(message.method);
    return send(message, options);
  };
  const connected = new Client({ name: 'agent', version: '1.0.0' });
  await Promise.all([server.connect(serverTransport), connected.connect(clientTransport)]);
  return connected;
}

describe('MCP tasks (2025-11-25), served by serveMcpTools and called through mcpTools', () => {
  it('draws a task as one execute_tool span: task id, each status message an event, the result, the server span under it', async () => {
    harness = await startTracingHarness({ register: true, tracing: { captureContent: true } });
    const sent: string[] = [];
    // The server's calls on a bus of their own (the client's plugin answers "research" on
    // harness.bus), traced into the same provider.
    const serverBus = new EventBus();
    const serverTracing = traceToolCalls(serverBus, { tracerProvider: harness.provider });
    client = await connectTaskServer(serverBus, {}, sent);
    const tools = await mcpTools(client, OWN_SERVER);
    expect(tools.map((tool) => [tool.name, tool.runsAsTask])).toEqual([['research', true]]);
    attachTools(harness.bus, tools);

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'research',
      arguments: { topic: 'otters' },
    });

    expect(JSON.parse(result.output)).toMatchObject({
      structuredContent: { report: 'all about otters' },
    });
    await serverTracing.shutdown();
    const spans = await harness.spans(2);
    const client_ = spans.find((span) => span.attributes['tooltrace.mcp.task.id'] !== undefined)!;
    const served = spans.find((span) => span !== client_)!;
    expect(client_.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'tooltrace.mcp.task.status': 'completed',
      'jsonrpc.request.id': expect.stringMatching(/^\d+$/) as string,
    });
    const statuses = client_.events
      .filter((event) => event.name === 'tool.stream.progress')
      .map((event) => JSON.stringify(event.attributes['tooltrace.stream.payload'] ?? ''));
    expect(statuses.some((status) => status.includes('gathering'))).toBe(true);
    expect(served.parentSpanId).toBe(client_.spanId);
    expect(served.traceId).toBe(client_.traceId);
    // Polled at the server's pollInterval (30 ms over about 120 ms), not in a tight loop.
    const polls = sent.filter((method) => method === 'tasks/get').length;
    expect(polls).toBeGreaterThan(0);
    expect(polls).toBeLessThan(12);
    expect(sent.filter((method) => method === 'tools/call')).toHaveLength(1);
  });

  it('shows each status on its event without content capture (tooltrace.mcp.task.status), the message left out', async () => {
    harness = await startTracingHarness({ register: true });
    client = await connectTaskServer(new EventBus(), {}, []);
    attachTools(harness.bus, await mcpTools(client, OWN_SERVER));

    await callTool(harness.bus, { id: 'tc_1', name: 'research', arguments: { topic: 'otters' } });

    const span = await harness.span('execute_tool research');
    const events = span.events.filter((event) => event.name === 'tool.stream.progress');
    const statuses = events.map((event) => event.attributes['tooltrace.mcp.task.status']);
    expect(statuses[0]).toBe('working');
    expect(statuses.at(-1)).toBe('completed');
    expect(new Set(statuses)).toEqual(new Set(['working', 'completed']));
    for (const event of events) {
      expect(event.attributes['tooltrace.stream.payload']).toBeUndefined();
    }
    expect(span.attributes['tooltrace.mcp.task.status']).toBe('completed');
  });

  it('fails the span of a task whose tool failed', async () => {
    harness = await startTracingHarness({ register: true });
    client = await connectTaskServer(new EventBus(), {}, []);
    attachTools(harness.bus, await mcpTools(client, OWN_SERVER));

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'research',
      arguments: { topic: 'forbidden' },
    });

    expect(result.error).toContain('topic refused');
    const span = await harness.span('execute_tool research');
    expect(span.status.code).toBe(2);
    expect(span.attributes).toMatchObject({ 'tooltrace.mcp.task.status': 'failed' });
  });

  it("sends tasks/cancel when the call is cancelled: the server's task ends cancelled and its tool is aborted", async () => {
    harness = await startTracingHarness({ register: true });
    const seen: { aborted?: unknown } = {};
    const sent: string[] = [];
    client = await connectTaskServer(new EventBus(), seen, sent);
    const plugins: StreamingToolPlugin[] = attachTools(
      harness.bus,
      await mcpTools(client, OWN_SERVER),
    );
    harness.bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'research', arguments: { topic: 'x' } });
    while (!sent.includes('tasks/get')) await sleep(5);

    await Promise.all(plugins.map((plugin) => plugin.shutdown()));

    while (seen.aborted === undefined) await sleep(5);
    expect(sent).toContain('tasks/cancel');
    const span = await harness.span('execute_tool research');
    expect(span.attributes).toMatchObject({
      'tooltrace.tool.cancelled': true,
      'mcp.method.name': 'tools/call',
      'tooltrace.mcp.task.id': expect.any(String) as string,
    });
    const taskId = String(span.attributes['tooltrace.mcp.task.id']);
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task.status).toBe('cancelled');
  });
});

describe('a tool served with execution.taskSupport optional', () => {
  /** `research` served as an optional task tool; `mcpTools` with `options`. */
  async function connectOptional(): Promise<Client> {
    const server = new McpServer(
      { name: 'research', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: (taskStore = new InMemoryTaskStore()),
      },
    );
    serveMcpTools(
      server,
      [
        {
          tool: researchTool({}),
          inputSchema: { topic: z.string() },
          execution: { taskSupport: 'optional' },
        },
      ],
      { taskPollInterval: 20 },
    );
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const connected = new Client({ name: 'agent', version: '1.0.0' });
    await Promise.all([server.connect(serverTransport), connected.connect(clientTransport)]);
    return connected;
  }

  it('sends its progress to a plain tools/call, as the same tool without execution does', async () => {
    client = await connectOptional();
    const notes: string[] = [];

    const result = await client.callTool(
      { name: 'research', arguments: { topic: 'otters' } },
      undefined,
      {
        onprogress: (note) => void notes.push(String(note.message)),
      },
    );

    expect(result.structuredContent).toEqual({ report: 'all about otters' });
    expect(notes).toEqual(['gathering', 'analyzing', 'writing']);
  });

  it("is called as a task by mcpTools(client, { tasks: 'optional' }): the task's statuses on its span", async () => {
    harness = await startTracingHarness({ register: true });
    client = await connectOptional();
    const tools = await mcpTools(client, { ...OWN_SERVER, tasks: 'optional' });
    expect(tools.map((tool) => tool.runsAsTask)).toEqual([true]);
    attachTools(harness.bus, tools);

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'research',
      arguments: { topic: 'otters' },
    });

    expect(JSON.parse(result.output)).toMatchObject({
      structuredContent: { report: 'all about otters' },
    });
    const span = await harness.span('execute_tool research');
    expect(span.attributes).toMatchObject({
      'tooltrace.mcp.task.id': expect.any(String) as string,
      'tooltrace.mcp.task.status': 'completed',
    });
  });
});

describe('a task call cancelled while its task is being created', () => {
  it("cancels the server's task once its creation answers (tasks/cancel), and the span ends cancelled", async () => {
    harness = await startTracingHarness({ register: true });
    let created: (taskId: string) => void = () => {};
    const taskCreated = new Promise<string>((resolve) => (created = resolve));
    let allowCreation = (): void => {};
    const creationAllowed = new Promise<void>((resolve) => (allowCreation = resolve));
    let finishWork = (): void => {};
    const workDone = new Promise<void>((resolve) => (finishWork = resolve));
    const server = new McpServer(
      { name: 'slow-start', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: (taskStore = new InMemoryTaskStore()),
      },
    );
    const outcome: { stored?: string } = {};
    server.experimental.tasks.registerToolTask(
      'build',
      { execution: { taskSupport: 'required' } },
      {
        createTask: async (extra) => {
          await creationAllowed; // the client gives up before this answers
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 20 });
          created(task.taskId);
          void workDone.then(() =>
            extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [] }).then(
              () => (outcome.stored = 'completed'),
              () => (outcome.stored = 'refused'),
            ),
          );
          return { task };
        },
        getTask: (extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
    const sent: string[] = [];
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const send = clientTransport.send.bind(clientTransport);
    clientTransport.send = (message, options) => {
      if ('method' in message) sent.push(message.method);
      return send(message, options);
    };
    client = new Client({ name: 'agent', version: '1.0.0' });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
    const plugins = attachTools(harness.bus, await mcpTools(client, OWN_SERVER));
    harness.bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'build', arguments: {} });
    while (!sent.includes('tools/call')) await sleep(5);

    await Promise.all(plugins.map((plugin) => plugin.shutdown()));
    allowCreation();
    const taskId = await taskCreated;
    while (!sent.includes('tasks/cancel')) await sleep(5);
    finishWork();

    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    while (outcome.stored === undefined) await sleep(5);
    expect(outcome.stored).toBe('refused');
    const span = await harness.span('execute_tool build');
    expect(span.attributes).toMatchObject({ 'tooltrace.tool.cancelled': true });
  });
});

describe('serveMcpTools() with execution', () => {
  it('refuses a task tool on an McpServer without the tasks capability, saying how to create one', () => {
    const server = new McpServer({ name: 'plain', version: '1.0.0' });
    expect(() =>
      serveMcpTools(server, [{ tool: researchTool({}), execution: { taskSupport: 'required' } }]),
    ).toThrow('has no tasks capability for tools/call');
  });

  it('refuses a task tool on an McpServer with the tasks capability and no taskStore, naming it', () => {
    const server = new McpServer(
      { name: 'storeless', version: '1.0.0' },
      { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } },
    );
    expect(() =>
      serveMcpTools(server, [{ tool: researchTool({}), execution: { taskSupport: 'optional' } }]),
    ).toThrow('has no taskStore: create it with { taskStore: new InMemoryTaskStore() }');
  });
});

describe('an MCP task that asks for input, and one that runs long', () => {
  /** A server written with the SDK alone: its task asks for input, then completes. */
  async function connectAskingServer(): Promise<Client> {
    const server = new McpServer(
      { name: 'deploy', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: (taskStore = new InMemoryTaskStore()),
      },
    );
    server.experimental.tasks.registerToolTask(
      'deploy',
      { description: 'Deploys after a confirmation', execution: { taskSupport: 'required' } },
      {
        createTask: async (extra) => {
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 20 });
          void (async () => {
            await sleep(30);
            await extra.taskStore.updateTaskStatus(task.taskId, 'input_required', 'confirm?');
            await sleep(60);
            await extra.taskStore.storeTaskResult(task.taskId, 'completed', {
              content: [{ type: 'text', text: 'deployed' }],
            });
          })();
          return { task };
        },
        getTask: (extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const connected = new Client({ name: 'agent', version: '1.0.0' });
    await Promise.all([server.connect(serverTransport), connected.connect(clientTransport)]);
    return connected;
  }

  it('shows input_required on the span: the attribute, a status event with its message, then the result', async () => {
    harness = await startTracingHarness({ register: true, tracing: { captureContent: true } });
    client = await connectAskingServer();
    attachTools(harness.bus, await mcpTools(client, OWN_SERVER));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'deploy', arguments: {} });

    expect(JSON.parse(result.output)).toMatchObject({
      content: [{ type: 'text', text: 'deployed' }],
    });
    const span = await harness.span('execute_tool deploy');
    expect(span.attributes).toMatchObject({
      'tooltrace.mcp.task.input_required': true,
      'tooltrace.mcp.task.status': 'completed',
    });
    const statuses = span.events
      .filter((event) => event.name === 'tool.stream.progress')
      .map((event) => JSON.parse(String(event.attributes['tooltrace.stream.payload'])) as unknown);
    expect(statuses).toContainEqual({ status: 'input_required', statusMessage: 'confirm?' });
    expect(span.status.code).toBe(1);
  });

  it('exports in-flight snapshots of a running task, like any running call, then its final span', async () => {
    harness = await startTracingHarness({
      register: true,
      tracing: { liveUpdates: { intervalMs: 40 } },
    });
    client = await connectTaskServer(new EventBus(), {}, []);
    attachTools(harness.bus, await mcpTools(client, OWN_SERVER));

    await callTool(harness.bus, { id: 'tc_1', name: 'research', arguments: { topic: 'otters' } });

    await harness.tracing.forceFlush();
    const spans = harness.receiver.spans;
    const final = spans.find((span) => span.name === 'execute_tool research')!;
    const snapshots = spans.filter((span) => span.name === 'execute_tool research (in flight)');
    expect(snapshots.length).toBeGreaterThan(0);
    for (const snapshot of snapshots) {
      expect(snapshot.traceId).toBe(final.traceId);
      expect(snapshot.parentSpanId).toBe(final.spanId);
      expect(snapshot.attributes).toMatchObject({
        'tooltrace.inflight': true,
        'gen_ai.tool.call.id': 'tc_1',
      });
    }
    // The later snapshots have the task's status events counted as the stream so far.
    const counts = snapshots.map((snapshot) =>
      Number(snapshot.attributes['tooltrace.stream.progress.count']),
    );
    expect(Math.max(...counts)).toBeGreaterThan(0);
    expect(final.attributes['tooltrace.inflight.updates']).toBe(snapshots.length);
  });
});
