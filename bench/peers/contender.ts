/**
 * The contenders of `npm run bench:peers`, run under Node 24 from the scratch folder the bench
 * installs the peers into (this file is bundled there with tooltrace's source; every package
 * resolves from that folder, so all share one `@opentelemetry/api`).
 *
 *   node contender.mjs <family> cpu <batches> <ms>  -> JSON: every batch's CPU ns per tool call
 *   node contender.mjs <family> shape               -> JSON: the tool spans of tooltrace and floor
 *   node contender.mjs <contender> heap <N> <calls> -> JSON: heap kept after `calls` calls
 *
 * Families `ai` and `lc`; each has four sides, run in one process, batch by batch in an order
 * rotated every batch, so all four are measured under the same load at the same time (a
 * shared machine's load changes by the second; a process per side let one side meet a busy
 * minute and another a quiet one): `untraced`, `peer`, `tooltrace` and `floor`.
 *
 * - `ai`: `untraced` (no telemetry), `peer` (`@ai-sdk/otel`'s `OpenTelemetry` integration, given
 *   per call as `telemetry.integrations`: the same code `registerTelemetry` enables for every
 *   call), `tooltrace` (`traceAiSdkTools` + `traceToolCalls`), `floor` (the tool's `execute`
 *   traced by hand with the SDK).
 * - `lc`: `untraced` (no callbacks), `peer` (OpenInference's `LangChainInstrumentation`, its patch
 *   of `CallbackManager._configureSync` in place for the peer's batches only), `tooltrace`
 *   (`TooltraceCallbackHandler` + `traceLangChainTools` + `traceToolCalls`), `floor` (the tool's
 *   function traced by hand with the SDK).
 *
 * Heap mode runs one contender alone (`ai-untraced`, `ai-otel`, `ai-tooltrace`, `ai-floor`,
 * `lc-untraced`, `lc-openinference`, `lc-tooltrace`, `lc-floor`): what a process keeps is only
 * its own there. Every side traces into the same provider: the SDK's NodeTracerProvider,
 * registered, with a BatchSpanProcessor into an exporter that drops every batch (reports
 * success, serializes nothing).
 */
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { OpenTelemetry } from '@ai-sdk/otel';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { RunnableLambda } from '@langchain/core/runnables';
import { tool as langchainTool } from '@langchain/core/tools';
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { generateText, tool as aiTool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { z } from 'zod';
import { traceAiSdkTools } from '../../src/ai-sdk/index.js';
import { EventBus } from '../../src/bus/index.js';
import { TooltraceCallbackHandler, traceLangChainTools } from '../../src/langchain/index.js';
import { traceToolCalls } from '../../src/otel/index.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

/**
 * Reports every batch exported and keeps nothing: the tracing work without serialization (in
 * `shape` mode it keeps the spans, to compare the trace the floor makes with tooltrace's).
 */
class DroppingExporter implements SpanExporter {
  spans = 0;
  kept: ReadableSpan[] | undefined;
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.spans += spans.length;
    this.kept?.push(...spans);
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const exporter = new DroppingExporter();
const provider = new NodeTracerProvider({
  // Large enough that nothing is dropped: a dropped span would make a side look cheaper.
  spanProcessors: [
    new BatchSpanProcessor(exporter, {
      maxQueueSize: 1_000_000,
      maxExportBatchSize: 512,
      scheduledDelayMillis: 100,
    }),
  ],
});
provider.register();

/** A workload: `n` preliminary results (chunks) per tool call, `perStep` calls per request. */
interface Workload {
  n: number;
  perStep: number;
}

const WORKLOADS: Workload[] = [
  { n: 0, perStep: 1 },
  { n: 10, perStep: 1 },
  { n: 100, perStep: 1 },
  { n: 0, perStep: 10 },
  { n: 10, perStep: 10 },
  { n: 100, perStep: 10 },
].filter(
  // BENCH_WORKLOADS=100/1,0/10 runs those alone (for profiling and quick comparisons).
  ({ n, perStep }) => process.env.BENCH_WORKLOADS?.split(',').includes(`${n}/${perStep}`) ?? true,
);

type Request = (workload: Workload, index: number) => Promise<void>;

/** The four sides of a family. */
type Side = 'untraced' | 'peer' | 'tooltrace' | 'floor';
const SIDES: readonly Side[] = ['untraced', 'peer', 'tooltrace', 'floor'];

const DESCRIPTION = 'Searches the documents';

/**
 * The floor: the trace tooltrace makes of a tool call, made by hand with the OpenTelemetry SDK
 * (no bus, no tooltrace code), the cheapest straightforward way. One `execute_tool search` span
 * (INTERNAL) with tooltrace's start attributes, the tool run inside it, each preliminary result
 * (chunk) a `tool.stream.partial` span event with tooltrace's event attributes, as many as
 * tooltrace keeps of 100 (59: its head, sampled middle and last; the floor keeps the first 59 and
 * counts the rest, which costs the same), then tooltrace's stream summary and status. `shape`
 * mode checks that the floor's spans and tooltrace's carry the same names, attributes, events
 * and status.
 */
const FLOOR_EVENTS = Number(process.env.BENCH_FLOOR_EVENTS ?? 59);
const floorTracer = provider.getTracer('floor');
let floorSequence = 0;

/** 32 hex characters, what tooltrace's event ids look like. */
function hexId(): string {
  return randomUUID().replaceAll('-', '');
}

function floorSpan(source: string, callId: string): Span {
  floorSequence += 1;
  return floorTracer.startSpan('execute_tool search', {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'search',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': callId,
      'tooltrace.depth': 0,
      'tooltrace.event.id': hexId(),
      'tooltrace.event.sequence': floorSequence,
      'tooltrace.event.source': source,
      'gen_ai.tool.description': DESCRIPTION,
    },
  });
}

/** The stream summary and status tooltrace sets when the result comes, and the span's end. */
function floorEnd(span: Span, partials: number, bytes: number, firstMs: number | undefined): void {
  const summary: Attributes = {
    'tooltrace.stream.partial.count': partials,
    'tooltrace.stream.progress.count': 0,
    'tooltrace.stream.partial.bytes': bytes,
  };
  if (firstMs !== undefined) summary['tooltrace.stream.time_to_first_partial_ms'] = firstMs;
  summary['tooltrace.stream.events.recorded'] = Math.min(partials, FLOOR_EVENTS);
  summary['tooltrace.stream.events.coalesced'] = Math.max(0, partials - FLOOR_EVENTS);
  summary['tooltrace.end_reason'] = 'result';
  summary['tooltrace.result.event.id'] = hexId();
  span.setAttributes(summary);
  span.setStatus({ code: SpanStatusCode.OK });
  span.end();
}

function floorFail(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setAttribute('tooltrace.end_reason', 'error');
  span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
  span.end();
}

/** A tool that returns one result, traced by hand. */
function floorPromise<I, O, R>(
  run: (input: I, options: O) => Promise<R>,
  source: string,
  callIdOf: (options: O) => string,
): (input: I, options: O) => Promise<R> {
  return (input, options) => {
    const span = floorSpan(source, callIdOf(options));
    return context.with(trace.setSpan(context.active(), span), run, undefined, input, options).then(
      (result) => {
        floorEnd(span, 0, 0, undefined);
        return result;
      },
      (error: unknown) => {
        floorFail(span, error);
        throw error;
      },
    );
  };
}

/**
 * A tool that streams (an async generator), traced by hand: a span event per result as it
 * comes. The consumer gets an iterator over the tool's own: each `next()` runs the tool inside
 * the span (an async generator around the tool would add two promises per result).
 */
function floorGenerator<I, O, T, R>(
  run: (input: I, options: O) => AsyncGenerator<T, R>,
  source: string,
  callIdOf: (options: O) => string,
): (input: I, options: O) => AsyncGenerator<T, R> {
  return (input, options) => {
    const started = performance.now();
    const span = floorSpan(source, callIdOf(options));
    const active = trace.setSpan(context.active(), span);
    const stream = context.with(active, run, undefined, input, options);
    let partials = 0;
    let bytes = 0;
    let firstMs: number | undefined;
    let ended = false;
    const record = (step: IteratorResult<T, R>): void => {
      if (ended) return;
      if (step.done === true) {
        ended = true;
        floorEnd(span, partials, bytes, firstMs);
        return;
      }
      partials += 1;
      const value = step.value;
      const size = Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value));
      bytes += size;
      if (partials === 1) firstMs = performance.now() - started;
      if (partials <= FLOOR_EVENTS) {
        span.addEvent('tool.stream.partial', {
          'tooltrace.stream.sequence': partials,
          'tooltrace.stream.payload.bytes': size,
        });
      }
    };
    const fail = (error: unknown): void => {
      if (!ended) {
        ended = true;
        floorFail(span, error);
      }
    };
    // The consumer gets the tool's own promise for each step; the step is recorded from a
    // reaction registered on it first (before the consumer sees the value).
    const traced: AsyncGenerator<T, R> = {
      next: () => {
        const step = context.with(active, stream.next, stream);
        void step.then(record, fail);
        return step;
      },
      // The consumer stopped early: the span still ends.
      return: (value) => {
        if (!ended) {
          ended = true;
          span.end();
        }
        return stream.return(value);
      },
      throw: (error: unknown) => {
        const step = context.with(active, stream.throw, stream, error);
        void step.then(record, fail);
        return step;
      },
      [Symbol.asyncIterator]: () => traced,
    };
    return traced;
  };
}

/** One `generateText` request whose single model step asks for `perStep` tool calls. */
function aiSdkRequest(side: Side): Request {
  // Per call rather than registered: the other sides in the process stay untraced by it.
  const telemetry = side === 'peer' ? { integrations: [new OpenTelemetry()] } : undefined;
  const bus = new EventBus();
  if (side === 'tooltrace') traceToolCalls(bus, { tracerProvider: provider });
  const toolSets = new Map<number, Record<string, unknown>>();
  const toolsFor = (n: number): Record<string, unknown> => {
    let tools = toolSets.get(n);
    if (tools !== undefined) return tools;
    const once = ({ query }: { query: string }): Promise<string> =>
      Promise.resolve(`found ${query}`);
    const streamed = async function* execute({ query }: { query: string }) {
      for (let index = 0; index < n; index += 1) yield `part ${index} of ${query}`;
    };
    const callId = (options: { toolCallId: string }): string => options.toolCallId;
    const search = aiTool({
      description: DESCRIPTION,
      inputSchema: z.object({ query: z.string() }),
      execute:
        side !== 'floor'
          ? n === 0
            ? once
            : streamed
          : n === 0
            ? floorPromise(once, 'ai-sdk', callId)
            : floorGenerator(streamed, 'ai-sdk', callId),
    });
    tools = { search };
    if (side === 'tooltrace') tools = traceAiSdkTools(tools, bus);
    toolSets.set(n, tools);
    return tools;
  };
  const models = new Map<number, MockLanguageModelV4>();
  const modelFor = (perStep: number): MockLanguageModelV4 => {
    let model = models.get(perStep);
    if (model !== undefined) return model;
    let request = 0;
    model = new MockLanguageModelV4({
      doGenerate: () => {
        request += 1;
        return Promise.resolve({
          content: Array.from({ length: perStep }, (_, index) => ({
            type: 'tool-call' as const,
            toolCallId: `call_${request}_${index}`,
            toolName: 'search',
            input: `{"query":"topic ${index}"}`,
          })),
          finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 5, text: 5, reasoning: 0 },
          },
          warnings: [],
        });
      },
    });
    models.set(perStep, model);
    return model;
  };
  return async ({ n, perStep }) => {
    const result = await generateText({
      model: modelFor(perStep),
      tools: toolsFor(n) as Parameters<typeof generateText>[0]['tools'],
      prompt: 'Find the documents',
      ...(telemetry === undefined ? {} : { telemetry }),
    });
    if (result.toolResults.length !== perStep) throw new Error('a tool call went missing');
    // The mock model records every call it gets: kept, that would count as every side's heap.
    modelFor(perStep).doGenerateCalls.length = 0;
  };
}

/**
 * OpenInference's patch of `CallbackManager._configureSync` (the same one `manuallyInstrument`
 * makes for the whole process), to be put in place for the peer's batches only.
 */
const configureSync = (() => {
  const manager = CallbackManagerModule.CallbackManager as unknown as Record<string, unknown>;
  let plain: unknown;
  let patched: unknown;
  return (on: boolean): void => {
    if (patched === undefined) {
      plain = manager._configureSync;
      new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(
        CallbackManagerModule,
      );
      patched = manager._configureSync;
    }
    manager._configureSync = on ? patched : plain;
  };
})();

/** One LangChain run: `perStep` tool invocations (inside one runnable when more than one). */
function langChainRequest(side: Side): Request {
  const bus = new EventBus();
  const callbacks: unknown[] = [];
  if (side === 'tooltrace') {
    traceToolCalls(bus, { tracerProvider: provider });
    callbacks.push(new TooltraceCallbackHandler(bus));
  }
  type LangChainTool = { invoke(input: unknown, config?: unknown): Promise<unknown> };
  const toolsByN = new Map<number, LangChainTool>();
  const toolFor = (n: number): LangChainTool => {
    let found = toolsByN.get(n);
    if (found !== undefined) return found;
    const options = {
      name: 'search',
      description: DESCRIPTION,
      schema: z.object({ query: z.string() }),
    };
    const once = ({ query }: { query: string }): Promise<string> =>
      Promise.resolve(`found ${query}`);
    const streamed = async function* search({ query }: { query: string }) {
      for (let index = 0; index < n; index += 1) yield `part ${index} of ${query}`;
      return `found ${query}`;
    };
    // LangChain names a call by its tool call when it has one; a bare invoke has none.
    const callId = (config: { toolCall?: { id?: string } } | undefined): string =>
      config?.toolCall?.id ?? randomUUID();
    const made =
      side !== 'floor'
        ? n === 0
          ? langchainTool(once, options)
          : langchainTool(streamed, options)
        : n === 0
          ? langchainTool(floorPromise(once, 'langchain', callId), options)
          : langchainTool(floorGenerator(streamed, 'langchain', callId), options);
    found = (side === 'tooltrace' ? traceLangChainTools([made], bus)[0] : made) as
      LangChainTool | undefined;
    toolsByN.set(n, found!);
    return found!;
  };
  const config = callbacks.length === 0 ? {} : { callbacks };
  const run: Request = async ({ n, perStep }, index) => {
    const search = toolFor(n);
    if (perStep === 1) {
      await search.invoke({ query: `topic ${index}` }, config);
      return;
    }
    const step = RunnableLambda.from(async (query: string, stepConfig) => {
      for (let call = 0; call < perStep; call += 1) {
        await search.invoke({ query: `${query} ${call}` }, stepConfig);
      }
      return query;
    });
    await step.invoke(`topic ${index}`, config);
  };
  if (side === 'untraced' || side === 'floor') return run;
  return async (workload, index) => {
    configureSync(side === 'peer');
    try {
      await run(workload, index);
    } finally {
      configureSync(false);
    }
  };
}

/** The side a heap-mode contender name stands for, and its family. */
function contenderSide(contender: string): { family: 'ai' | 'lc'; side: Side } {
  const family = contender.startsWith('ai-') ? 'ai' : 'lc';
  const name = contender.slice(3);
  const side: Side =
    name === 'untraced' || name === 'tooltrace' || name === 'floor' ? name : 'peer';
  return { family, side };
}

function requestFor(family: 'ai' | 'lc', side: Side): Request {
  return family === 'ai' ? aiSdkRequest(side) : langChainRequest(side);
}

function cpuNs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) * 1_000;
}

/** Tool calls in one warm-up batch: about the same work whatever the stream's length. */
function warmUpCalls({ n, perStep }: Workload): number {
  const calls = Math.round(1_000 / (1 + n / 10));
  return Math.max(perStep, Math.round(calls / perStep) * perStep);
}

/**
 * Tool calls in one timed batch of a workload: as many as take the four sides `batchMs` of CPU
 * on average by the warm-up's measure (whole requests), so every workload is timed for about
 * as long whatever its cost per call.
 */
function callsFor({ perStep }: Workload, nsPerCall: number, batchMs: number): number {
  const requests = Math.max(1, Math.round((batchMs * 1e6) / (nsPerCall * perStep)));
  return requests * perStep;
}

async function runBatch(request: Request, workload: Workload, calls: number): Promise<number> {
  const requests = calls / workload.perStep;
  const start = cpuNs();
  for (let index = 0; index < requests; index += 1) await request(workload, index);
  return (cpuNs() - start) / calls;
}

/**
 * A timed batch: the calls, then a young-generation collection, timed with them, so the batch
 * pays for all the short-lived garbage its calls made (and the next batch starts with an empty
 * nursery: it pays for none of another side's).
 */
async function timedBatch(request: Request, workload: Workload, calls: number): Promise<number> {
  const requests = calls / workload.perStep;
  const start = cpuNs();
  for (let index = 0; index < requests; index += 1) await request(workload, index);
  collectGarbage({ type: 'minor' });
  return (cpuNs() - start) / calls;
}

/** Attributes whose values differ from call to call (ids, times): compared by type only. */
const VARYING = new Set([
  'gen_ai.tool.call.id',
  'tooltrace.event.id',
  'tooltrace.event.sequence',
  'tooltrace.result.event.id',
  'tooltrace.stream.time_to_first_partial_ms',
]);

/** What a tool span shows, without what differs between two calls. */
function shapeOf(span: ReadableSpan): unknown {
  const attributes = (values: Attributes | undefined): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(values ?? {})
        .map(([key, value]) => [key, VARYING.has(key) ? typeof value : value] as const)
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  return {
    name: span.name,
    kind: span.kind,
    status: span.status,
    attributes: attributes(span.attributes),
    events: span.events.length,
    eventNames: [...new Set(span.events.map((event) => event.name))],
    eventAttributes: [
      ...new Set(span.events.map((event) => Object.keys(event.attributes ?? {}).join(','))),
    ],
    droppedEvents: span.droppedEventsCount,
  };
}

/** The spans one request makes on each traced side, for N = 0, 10, 100. */
async function shapes(family: 'ai' | 'lc'): Promise<Record<string, unknown[]>> {
  const found: Record<string, unknown[]> = {};
  for (const side of ['tooltrace', 'floor'] as const) {
    const request = requestFor(family, side);
    found[side] = [];
    for (const n of [0, 10, 100]) {
      exporter.kept = [];
      await request({ n, perStep: 1 }, 0);
      await provider.forceFlush();
      const tools = exporter.kept.filter((span) => span.name.startsWith('execute_tool'));
      found[side].push(...tools.map(shapeOf));
    }
  }
  exporter.kept = undefined;
  return found;
}

async function main(): Promise<void> {
  const [name = '', mode = 'cpu', first = '9', second = '10000'] = process.argv.slice(2);
  if (mode === 'heap') {
    const { family, side } = contenderSide(name);
    const request = requestFor(family, side);
    const workload = { n: Number(first), perStep: 1 };
    const calls = Number(second);
    // Warm up on another stream length, so compiled code and caches are not counted as kept.
    await runBatch(request, { n: workload.n === 0 ? 1 : 0, perStep: 1 }, 200);
    await runBatch(request, workload, 200);
    await provider.forceFlush();
    collectGarbage();
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    await runBatch(request, workload, calls);
    await provider.forceFlush();
    collectGarbage();
    collectGarbage();
    const kept = process.memoryUsage().heapUsed - before;
    process.stdout.write(`${JSON.stringify({ contender: name, n: workload.n, calls, kept })}\n`);
    return;
  }
  const family = name === 'ai' ? 'ai' : 'lc';
  if (mode === 'shape') {
    process.stdout.write(`${JSON.stringify({ family, shapes: await shapes(family) })}\n`);
    return;
  }
  const requests = SIDES.map((side) => requestFor(family, side));
  const batches = Number(first);
  const batchMs = Number(second);
  // Warm-up: every workload on every side, three times, so the timed batches run optimized
  // code; the last pass measures what a call costs, to size the timed batches.
  const calls = WORKLOADS.map(() => 0);
  for (let pass = 0; pass < 3; pass += 1) {
    for (const [index, workload] of WORKLOADS.entries()) {
      let sum = 0;
      for (const request of requests)
        sum += await runBatch(request, workload, warmUpCalls(workload));
      calls[index] = callsFor(workload, sum / requests.length, batchMs);
    }
  }
  const times = SIDES.map(() => WORKLOADS.map(() => [] as number[]));
  let turn = 0;
  for (let batch = 0; batch < batches; batch += 1) {
    for (const [index, workload] of WORKLOADS.entries()) {
      // The sides take turns going first.
      turn += 1;
      for (let offset = 0; offset < SIDES.length; offset += 1) {
        const side = (turn + offset) % SIDES.length;
        // Every batch starts from an empty span queue (the side before it exports its own).
        await provider.forceFlush();
        times[side]![index]!.push(await timedBatch(requests[side]!, workload, calls[index]!));
      }
    }
  }
  await provider.forceFlush();
  // Every batch's CPU ns per tool call, by side and workload: the bench picks the estimator.
  const perCall = Object.fromEntries(
    SIDES.map((side, sideIndex) => [
      side,
      Object.fromEntries(
        WORKLOADS.map((workload, index) => [
          `${workload.n}/${workload.perStep}`,
          times[sideIndex]![index]!,
        ]),
      ),
    ]),
  );
  const callsPerBatch = Object.fromEntries(
    WORKLOADS.map((workload, index) => [`${workload.n}/${workload.perStep}`, calls[index]]),
  );
  process.stdout.write(
    `${JSON.stringify({ family, perCall, callsPerBatch, spans: exporter.spans })}\n`,
  );
}

await main();
await provider.shutdown();
