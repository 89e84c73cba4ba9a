/**
 * The agent against peers that misbehave on purpose, at the scale issue 43 names. Each part runs
 * in a child process of its own (so a heap limit or a crash is that part's), prints its figures,
 * and, where there is a before to compare with, runs it side by side in the same invocation.
 *
 *   npx tsx bench/hostile.bench.ts            # every part
 *   npx tsx bench/hostile.bench.ts heap       # one part: heap | late | tools | poll
 *
 * - heap: an agent on a 1 GB heap (`--max-old-space-size=1024`) calls an MCP server that answers
 *   every `tools/call` with 20 MB of text, 80 times, wired as the docs wire it (`mcpTools`, a
 *   plugin per tool, `traceToolCalls`), and reads its heap after a full GC every 10 calls; side
 *   by side, the same agent with the replay ring on within its byte bounds, and on without them
 *   (`ringSize: 1024`, no byte bound: the bus as it was) — that one dies at the heap limit.
 * - late: 50,000 calls cut short (`maxOpenSpans` 10,000), then every one answered: spans per
 *   call id, `lateEvents`; then the same calls streaming 5 partials each after eviction: spans,
 *   `lateEvents`, CPU time.
 * - tools: a tool list with a name listed twice and an empty name, wired the docs' way: does it
 *   throw, and how many `tools/call` does one `tool.invoke` send.
 * - poll: a task server that says `pollInterval: 0` and keeps its task `working`: polls a second
 *   and the process's CPU over 3 s.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { EventBus, type BusEvent } from '../src/bus/index.js';
import { TOOL_INVOKE, TOOL_RESULT, type ToolResult } from '../src/events/index.js';
import { mcpTools } from '../src/mcp/index.js';
import { traceToolCalls } from '../src/otel/index.js';
import { StreamingToolPlugin } from '../src/streamtool/index.js';
import { HostilePeer, toolDefinition } from '../test/mcp/hostile-peer.js';

/** Counts exported spans per tool call id, keeping nothing else. */
class CallIdCounter implements SpanExporter {
  readonly perCall = new Map<string, number>();
  spans = 0;

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) {
      this.spans += 1;
      const id = String(span.attributes['gen_ai.tool.call.id']);
      this.perCall.set(id, (this.perCall.get(id) ?? 0) + 1);
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function provider(exporter: SpanExporter): BasicTracerProvider {
  return new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
}

function call(bus: EventBus, id: string, name: string): Promise<ToolResult> {
  return new Promise((resolve) => {
    const off = bus.subscribe<ToolResult>(TOOL_RESULT, (event) => {
      if (event.payload.id !== id) return;
      off();
      resolve(event.payload);
    });
    bus.emit(TOOL_INVOKE, { id, name, arguments: {} });
  });
}

async function connect(peer: HostilePeer): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(peer.transport);
  return client;
}

const MB = 1024 * 1024;

/** Child: 80 results of 20 MB; prints the heap after GC every 10 calls. */
async function heapChild(ring: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const text = 'r'.repeat(20 * MB);
  const peer = new HostilePeer({
    pages: [[toolDefinition('fetch_report')]],
    answer: (method) =>
      method === 'tools/call' ? { result: { content: [{ type: 'text', text }] } } : undefined,
  });
  const client = await connect(peer);
  const unbounded = {
    ringBytes: Number.MAX_SAFE_INTEGER,
    ringPayloadBytes: Number.MAX_SAFE_INTEGER,
  };
  const bus = new EventBus(
    ring === 'off' ? {} : ring === 'bytes' ? { ringSize: 1024 } : { ringSize: 1024, ...unbounded },
  );
  const tracing = traceToolCalls(bus, { tracerProvider: provider(new CallIdCounter()) });
  for (const tool of await mcpTools(client))
    new StreamingToolPlugin(tool.name, () => tool).attach(bus);
  gc();
  const base = process.memoryUsage().heapUsed;
  console.log(`heap-after-gc calls=0 ${(base / MB).toFixed(1)} MB`);
  for (let index = 1; index <= 80; index += 1) {
    await call(bus, `tc_${index}`, 'fetch_report');
    if (index % 10 === 0) {
      gc();
      console.log(
        `heap-after-gc calls=${index} ${(process.memoryUsage().heapUsed / MB).toFixed(1)} MB ring=${JSON.stringify(bus.stats())}`,
      );
    }
  }
  console.log(`bus ${JSON.stringify(bus.stats())}`);
  await tracing.shutdown();
  await client.close();
}

function runChild(part: string, ...args: string[]): { output: string; status: number | null } {
  const child = spawnSync(
    process.execPath,
    [
      '--max-old-space-size=1024',
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      `child-${part}`,
      ...args,
    ],
    { encoding: 'utf8', maxBuffer: 64 * MB },
  );
  const died = child.stderr.includes('heap limit') ? ' (FATAL: reached heap limit)' : '';
  return {
    output:
      child.stdout +
      (child.status === 0 ? '' : `exit ${child.status ?? child.signal ?? '?'}${died}\n`),
    status: child.status,
  };
}

function heap(): void {
  console.log('## heap: 80 tools/call results of 20 MB on a 1 GB heap');
  for (const [label, ring] of [
    ['default bus (ring off)', 'off'],
    [
      'ringSize 1024 with the default byte bounds (8 MiB, payloads over 64 KiB by preview)',
      'bytes',
    ],
    ['ringSize 1024 and no byte bound: the bus as it was', 'unbounded'],
  ] as const) {
    console.log(`-- ${label}`);
    process.stdout.write(runChild('heap', ring).output);
  }
}

/** Child: 50,000 calls cut short and answered late, then streaming after eviction. */
async function lateChild(partials: number): Promise<void> {
  const calls = 50_000;
  const exporter = new CallIdCounter();
  const bus = new EventBus({ dispatchFrames: false });
  const tracing = traceToolCalls(bus, {
    tracerProvider: provider(exporter),
    maxOpenSpans: 10_000,
    liveUpdates: false,
  });
  const invokes: BusEvent[] = [];
  for (let index = 0; index < calls; index += 1) {
    invokes.push(bus.emit('tool.invoke', { id: `tc_${index}`, name: 'pay', arguments: {} }));
  }
  const cpu = process.cpuUsage();
  for (const invoke of invokes) {
    const id = (invoke.payload as { id: string }).id;
    const causation = { parentId: invoke.id, parentSeq: invoke.causation.sequence };
    for (let sequence = 1; sequence <= partials; sequence += 1) {
      bus.emit(
        'tool.stream.partial',
        { tool_name: 'pay', tool_id: id, turn_id: '', sequence, payload: 'more' },
        { causation },
      );
    }
    bus.emit('tool.result', { id, name: 'pay', output: 'late' }, { causation });
  }
  const used = process.cpuUsage(cpu);
  await tracing.shutdown();
  const stats = tracing.stats();
  const doubled = [...exporter.perCall.values()].filter((count) => count > 1).length;
  console.log(
    `calls=${calls} spans=${exporter.spans} call-ids=${exporter.perCall.size} ids-with-2+-spans=${doubled}`,
  );
  const events = calls * (partials + 1);
  const expected = (calls - 10_000) * (partials + 1);
  console.log(
    `lateEvents=${stats.lateEvents} (expected ${expected}) ` +
      `orphanSpans=${stats.orphanSpans} endedCalls=${JSON.stringify(stats.endedCalls)}`,
  );
  const perEvent = ((used.user + used.system) / events).toFixed(2);
  console.log(
    `cpu for the ${events} events after the invokes: ${((used.user + used.system) / 1e6).toFixed(2)} s (${perEvent} µs/event)`,
  );
  gcAndPrintHeap();
}

function gcAndPrintHeap(): void {
  (globalThis as { gc?: () => void }).gc?.();
  console.log(`heap-after-gc ${(process.memoryUsage().heapUsed / MB).toFixed(1)} MB`);
}

function late(): void {
  console.log(
    '## late: 50,000 calls cut short (maxOpenSpans 10,000), each answered after eviction',
  );
  process.stdout.write(runChild('late', '0').output);
  console.log('-- the same, each tool streaming 5 partials after eviction before its result');
  process.stdout.write(runChild('late', '5').output);
}

/** Child: a duplicated name and an empty one, wired the docs' way. */
async function toolsChild(): Promise<void> {
  const peer = new HostilePeer({
    pages: [[toolDefinition('pay'), toolDefinition('pay'), toolDefinition('')]],
    answer: (method) =>
      method === 'tools/call'
        ? { result: { content: [{ type: 'text', text: 'charged' }] } }
        : undefined,
  });
  const client = await connect(peer);
  const bus = new EventBus();
  let threw = 'no';
  try {
    for (const tool of await mcpTools(client))
      new StreamingToolPlugin(tool.name, () => tool).attach(bus);
  } catch (error) {
    threw = String(error);
  }
  await call(bus, 'tc_1', 'pay');
  await new Promise((resolve) => setTimeout(resolve, 50));
  console.log(
    `wiring threw: ${threw}; tools/call sent for one tool.invoke of "pay": ${peer.received('tools/call').length}`,
  );
  await client.close();
}

function tools(): void {
  console.log('## tools: a list with "pay" twice and an empty name');
  process.stdout.write(runChild('tools').output);
}

/** Child: pollInterval 0 and a task that stays `working`, for 3 s. */
async function pollChild(minPollInterval: number): Promise<void> {
  const task = {
    taskId: 'task-1',
    status: 'working',
    pollInterval: 0,
    ttl: null,
    createdAt: new Date(0).toISOString(),
    lastUpdatedAt: new Date(0).toISOString(),
  };
  const peer = new HostilePeer({
    capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
    pages: [[toolDefinition('research', { execution: { taskSupport: 'required' } })]],
    answer: (method) => {
      if (method === 'tools/call') return { result: { task } };
      if (method === 'tasks/get') return { result: task };
      if (method === 'tasks/cancel') return { result: { ...task, status: 'cancelled' } };
      return undefined;
    },
  });
  const client = await connect(peer);
  const bus = new EventBus();
  for (const tool of await mcpTools(client, {
    taskDeadline: 3000,
    taskMinPollInterval: minPollInterval,
  })) {
    new StreamingToolPlugin(tool.name, () => tool).attach(bus);
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await call(bus, 'tc_1', 'research');
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const polls = peer.received('tasks/get').length;
  console.log(
    `polls=${polls} in ${seconds.toFixed(2)} s = ${(polls / seconds).toFixed(1)} polls/s; ` +
      `cpu ${(((used.user + used.system) / 1e6 / seconds) * 100).toFixed(1)} % of a core; ended: ${result.error}`,
  );
  await client.close();
}

function poll(): void {
  console.log(
    '## poll: a task server saying pollInterval 0, its task kept working, taskDeadline 3 s',
  );
  console.log('-- default (taskMinPollInterval 100)');
  process.stdout.write(runChild('poll', '100').output);
  console.log('-- taskMinPollInterval 0: the server dictates the rate, as before');
  process.stdout.write(runChild('poll', '0').output);
}

const part = process.argv[2];
if (part === 'child-heap') await heapChild(process.argv[3]!);
else if (part === 'child-late') await lateChild(Number(process.argv[3]));
else if (part === 'child-tools') await toolsChild();
else if (part === 'child-poll') await pollChild(Number(process.argv[3]));
else {
  const parts: Record<string, () => void> = { heap, late, tools, poll };
  for (const [name, run] of Object.entries(parts)) if (part === undefined || part === name) run();
}
