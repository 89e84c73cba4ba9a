import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mcpTools } from '../../src/mcp/index.js';
import { MAX_POLL_INTERVAL, pollDelay } from '../../src/mcp/mcp-task-call.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { HostilePeer, toolDefinition } from './hostile-peer.js';
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

/** A task server whose task stays `working` and asks to be polled every `pollInterval` ms. */
function foreverWorking(pollInterval: unknown, ttl: number | null): HostilePeer {
  const task = (status: string): Record<string, unknown> => ({
    taskId: 'task-1',
    status,
    pollInterval,
    ttl,
    createdAt: new Date(0).toISOString(),
    lastUpdatedAt: new Date(0).toISOString(),
  });
  return new HostilePeer({
    capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
    pages: [[toolDefinition('research', { execution: { taskSupport: 'required' } })]],
    answer: (method) => {
      if (method === 'tools/call') return { result: { task: task('working') } };
      if (method === 'tasks/get') return { result: task('working') };
      if (method === 'tasks/cancel') return { result: task('cancelled') };
      return undefined;
    },
  });
}

async function connect(peer: HostilePeer): Promise<Client> {
  const connected = new Client({ name: 'agent', version: '1.0.0' });
  await connected.connect(peer.transport);
  return connected;
}

describe('mcpTools() against a hostile task server', () => {
  it('polls at most 10 times a second when the server says pollInterval 0, and stops at taskDeadline', async () => {
    harness = await startTracingHarness({ register: true });
    const peer = foreverWorking(0, null);
    client = await connect(peer);
    attachTools(harness.bus, await mcpTools(client, { taskDeadline: 600 }));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'research', arguments: {} });

    const polls = peer.received('tasks/get');
    expect(polls.length).toBeGreaterThanOrEqual(1);
    expect(polls.length).toBeLessThanOrEqual(6);
    for (let index = 1; index < polls.length; index += 1) {
      expect(polls[index]!.at - polls[index - 1]!.at).toBeGreaterThanOrEqual(95);
    }
    expect(result.error).toMatch(/still "working" after 600 ms \(taskDeadline\); it was cancelled/);
    await vi.waitFor(() => expect(peer.received('tasks/cancel')).toHaveLength(1));
    const span = await harness.span('execute_tool research');
    expect(span.attributes).toMatchObject({
      'error.type': 'task_deadline',
      'tooltrace.mcp.task.polls': polls.length,
    });
    // Nothing polls after the call ended.
    const after = polls.length;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(peer.received('tasks/get')).toHaveLength(after);
  });

  it("ends the call at the task's own ttl when that comes first", async () => {
    harness = await startTracingHarness({ register: true });
    const peer = foreverWorking(1e12, 300);
    client = await connect(peer);
    attachTools(harness.bus, await mcpTools(client));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'research', arguments: {} });

    expect(result.error).toMatch(/after 300 ms \(the task's ttl\)/);
    // 1e12 is held to 30 s, not run as the 1 ms Node makes of it: no poll within the ttl.
    expect(peer.received('tasks/get')).toHaveLength(0);
    await vi.waitFor(() => expect(peer.received('tasks/cancel')).toHaveLength(1));
  });
});

describe('a task call still polled', () => {
  it('repeats its unchanged status every 30 s, so the tracer never takes it for idle', async () => {
    // Only the clock the status trail reads is faked: each poll moves it 31 s on.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      harness = await startTracingHarness({ register: true });
      const peer = foreverWorking(0, null);
      client = await connect(peer);
      attachTools(harness.bus, await mcpTools(client, { taskDeadline: 450 }));
      const moveClock = setInterval(() => vi.advanceTimersByTime(31_000), 100);
      try {
        await callTool(harness.bus, { id: 'tc_1', name: 'research', arguments: {} });
      } finally {
        clearInterval(moveClock);
      }

      const span = await harness.span('execute_tool research');
      const working = span.events.filter(
        (event) =>
          event.name === 'tool.stream.progress' &&
          event.attributes['tooltrace.mcp.task.status'] === 'working',
      );
      expect(working.length).toBeGreaterThanOrEqual(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('pollDelay()', () => {
  it('holds what the server asks for to the minimum and 30 s', () => {
    expect(pollDelay(0, 1000, 100)).toBe(100);
    expect(pollDelay(-5, 1000, 100)).toBe(100);
    expect(pollDelay(Number.NaN, 1000, 100)).toBe(1000);
    expect(pollDelay('fast', 1000, 100)).toBe(1000);
    expect(pollDelay(undefined, 1000, 100)).toBe(1000);
    expect(pollDelay(1e12, 1000, 100)).toBe(MAX_POLL_INTERVAL);
    expect(pollDelay(Number.POSITIVE_INFINITY, 1000, 100)).toBe(MAX_POLL_INTERVAL);
    expect(pollDelay(2500, 1000, 100)).toBe(2500);
  });
});
