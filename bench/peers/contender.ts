/**
 * One contender of `npm run bench:peers`, run in a process of its own under Node 24 from the
 * scratch folder the bench installs the peers into (this file is bundled there with tooltrace's
 * source; every package resolves from that folder, so all share one `@opentelemetry/api`).
 *
 *   node contender.mjs <contender> cpu <batches>   -> JSON: median CPU ns per tool call, by workload
 *   node contender.mjs <contender> heap <N> <calls> -> JSON: heap kept after `calls` calls
 *
 * Contenders: `ai-untraced`, `ai-otel` (`@ai-sdk/otel` registered), `ai-tooltrace`
 * (`traceAiSdkTools` + `traceToolCalls`), `lc-untraced`, `lc-openinference`
 * (`LangChainInstrumentation`), `lc-tooltrace` (`TooltraceCallbackHandler` +
 * `traceLangChainTools` + `traceToolCalls`). Every one traces into the same kind of provider:
 * the SDK's NodeTracerProvider, registered, with a BatchSpanProcessor into an exporter that drops
 * every batch (reports success, serializes nothing).
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
import { generateText, registerTelemetry, tool as aiTool } from 'ai';
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

/** One `generateText` request whose single model step asks for `perStep` tool calls. */
function aiSdkRequest(contender: string): Request {
  if (contender === 'ai-otel') registerTelemetry(new OpenTelemetry());
  const bus = new EventBus();
  if (contender === 'ai-tooltrace') traceToolCalls(bus, { tracerProvider: provider });
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
    if (contender === 'ai-tooltrace') tools = traceAiSdkTools(tools, bus);
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
    });
    if (result.toolResults.length !== perStep) throw new Error('a tool call went missing');
    // The mock model records every call it gets: kept, that would count as every side's heap.
    modelFor(perStep).doGenerateCalls.length = 0;
  };
}

/** One LangChain run: `perStep` tool invocations (inside one runnable when more than one). */
function langChainRequest(contender: string): Request {
  const bus = new EventBus();
  const callbacks: unknown[] = [];
  if (contender === 'lc-tooltrace') {
    traceToolCalls(bus, { tracerProvider: provider });
    callbacks.push(new TooltraceCallbackHandler(bus));
  }
  if (contender === 'lc-openinference') {
    new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(
      CallbackManagerModule,
    );
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
    found = (contender === 'lc-tooltrace' ? traceLangChainTools([made], bus)[0] : made) as
      LangChainTool | undefined;
    toolsByN.set(n, found!);
    return found!;
  };
  const config = callbacks.length === 0 ? {} : { callbacks };
  return async ({ n, perStep }, index) => {
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
}

function cpuNs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) * 1_000;
}

/** Tool calls in one timed batch: about the same work whatever the stream's length. */
function callsPerBatch({ n, perStep }: Workload): number {
  const calls = Math.round(1_500 / (1 + n / 10));
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
  const [contender = '', mode = 'cpu', first = '5', second = '10000'] = process.argv.slice(2);
  const request = contender.startsWith('ai-')
    ? aiSdkRequest(contender)
    : langChainRequest(contender);
  if (mode === 'heap') {
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
    process.stdout.write(`${JSON.stringify({ contender, n: workload.n, calls, kept })}\n`);
    return;
  }
  const batches = Number(first);
  // Warm-up: every workload once, so the first timed batch runs optimized code.
  for (const workload of WORKLOADS) await runBatch(request, workload, callsPerBatch(workload));
  const times = WORKLOADS.map(() => [] as number[]);
  for (let batch = 0; batch < batches; batch += 1) {
    for (const [index, workload] of WORKLOADS.entries()) {
      times[index]!.push(await runBatch(request, workload, callsPerBatch(workload)));
    }
  }
  await provider.forceFlush();
  const perCall = Object.fromEntries(
    WORKLOADS.map((workload, index) => [
      `${workload.n}/${workload.perStep}`,
      median(times[index]!),
    ]),
  );
  process.stdout.write(`${JSON.stringify({ contender, perCall, spans: exporter.spans })}\n`);
}

await main();
await provider.shutdown();
