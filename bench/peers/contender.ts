/**
 * The contenders of `npm run bench:peers`, run under Node 24 from the scratch folder the bench
 * installs the peers into (this file is bundled there with tooltrace's source; every package
 * resolves from that folder, so all share one `@opentelemetry/api`).
 *
 *   node contender.mjs <family> cpu <batches>       -> JSON: CPU ns per tool call, by side and workload
 *   node contender.mjs <contender> heap <N> <calls> -> JSON: heap kept after `calls` calls
 *
 * Families `ai` and `lc`; each has three sides, run in one process, batch by batch in an order
 * rotated every batch, so all three are measured under the same load at the same time (a
 * shared machine's load changes by the second; a process per side let one side meet a busy
 * minute and another a quiet one): `untraced`, `peer` and `tooltrace`.
 *
 * - `ai`: `untraced` (no telemetry), `peer` (`@ai-sdk/otel`'s `OpenTelemetry` integration, given
 *   per call as `telemetry.integrations`: the same code `registerTelemetry` enables for every
 *   call), `tooltrace` (`traceAiSdkTools` + `traceToolCalls`).
 * - `lc`: `untraced` (no callbacks), `peer` (OpenInference's `LangChainInstrumentation`, its patch
 *   of `CallbackManager._configureSync` in place for the peer's batches only), `tooltrace`
 *   (`TooltraceCallbackHandler` + `traceLangChainTools` + `traceToolCalls`).
 *
 * Heap mode runs one contender alone (`ai-untraced`, `ai-otel`, `ai-tooltrace`, `lc-untraced`,
 * `lc-openinference`, `lc-tooltrace`): what a process keeps is only its own there. Every side
 * traces into the same provider: the SDK's NodeTracerProvider, registered, with a
 * BatchSpanProcessor into an exporter that drops every batch (reports success, serializes
 * nothing).
 */
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { OpenTelemetry } from '@ai-sdk/otel';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { RunnableLambda } from '@langchain/core/runnables';
import { tool as langchainTool } from '@langchain/core/tools';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { generateText, tool as aiTool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { z } from 'zod';
import { traceAiSdkTools } from '../../src/ai-sdk/index.js';
import { EventBus } from '../../src/bus/index.js';
import { TooltraceCallbackHandler, traceLangChainTools } from '../../src/langchain/index.js';
import { traceToolCalls } from '../../src/otel/index.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Reports every batch exported and keeps nothing: the tracing work without serialization. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.spans += spans.length;
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

/** The three sides of a family. */
type Side = 'untraced' | 'peer' | 'tooltrace';
const SIDES: readonly Side[] = ['untraced', 'peer', 'tooltrace'];

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
    const search = aiTool({
      description: 'Searches the documents',
      inputSchema: z.object({ query: z.string() }),
      execute:
        n === 0
          ? ({ query }) => Promise.resolve(`found ${query}`)
          : async function* execute({ query }) {
              for (let index = 0; index < n; index += 1) yield `part ${index} of ${query}`;
            },
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
      description: 'Searches the documents',
      schema: z.object({ query: z.string() }),
    };
    const made =
      n === 0
        ? langchainTool(
            ({ query }: { query: string }) => Promise.resolve(`found ${query}`),
            options,
          )
        : langchainTool(async function* search({ query }: { query: string }) {
            for (let index = 0; index < n; index += 1) yield `part ${index} of ${query}`;
            return `found ${query}`;
          }, options);
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
  if (side === 'untraced') return run;
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
  const side: Side = name === 'untraced' ? 'untraced' : name === 'tooltrace' ? 'tooltrace' : 'peer';
  return { family, side };
}

function requestFor(family: 'ai' | 'lc', side: Side): Request {
  return family === 'ai' ? aiSdkRequest(side) : langChainRequest(side);
}

function cpuNs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) * 1_000;
}

/** Tool calls in one timed batch: about the same work whatever the stream's length. */
function callsPerBatch({ n, perStep }: Workload): number {
  const calls = Math.round(1_000 / (1 + n / 10));
  return Math.max(perStep, Math.round(calls / perStep) * perStep);
}

async function runBatch(request: Request, workload: Workload, calls: number): Promise<number> {
  const requests = calls / workload.perStep;
  const start = cpuNs();
  for (let index = 0; index < requests; index += 1) await request(workload, index);
  return (cpuNs() - start) / calls;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
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
  const requests = SIDES.map((side) => requestFor(family, side));
  const batches = Number(first);
  // Warm-up: every workload on every side, twice, so the timed batches run optimized code.
  for (let pass = 0; pass < 2; pass += 1) {
    for (const workload of WORKLOADS) {
      for (const request of requests) await runBatch(request, workload, callsPerBatch(workload));
    }
  }
  const times = SIDES.map(() => WORKLOADS.map(() => [] as number[]));
  let turn = 0;
  for (let batch = 0; batch < batches; batch += 1) {
    for (const [index, workload] of WORKLOADS.entries()) {
      // The sides take turns going first: a batch can pay for garbage the one before it left.
      turn += 1;
      for (let offset = 0; offset < SIDES.length; offset += 1) {
        const side = (turn + offset) % SIDES.length;
        times[side]![index]!.push(
          await runBatch(requests[side]!, workload, callsPerBatch(workload)),
        );
      }
    }
  }
  await provider.forceFlush();
  const perCall = Object.fromEntries(
    SIDES.map((side, sideIndex) => [
      side,
      Object.fromEntries(
        WORKLOADS.map((workload, index) => [
          `${workload.n}/${workload.perStep}`,
          median(times[sideIndex]![index]!),
        ]),
      ),
    ]),
  );
  process.stdout.write(`${JSON.stringify({ family, perCall, spans: exporter.spans })}\n`);
}

await main();
await provider.shutdown();
