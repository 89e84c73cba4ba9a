/**
 * A LangGraph agent traced with its tool's stream. Run it with `npx tsx examples/langchain.ts`.
 *
 * `createReactAgent` runs a generator tool that yields chunks, reports progress with a custom
 * event and starts a span of its own. `TooltraceCallbackHandler` puts the runs on the bus,
 * `traceLangChainTools` runs the tool's code inside its `execute_tool` span. The model is
 * scripted, so the example needs no network or key: put your provider's model in its place. The
 * spans go to an embedded OTLP receiver, and the program prints the tree that arrived.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { dispatchCustomEvent } from '@langchain/core/callbacks/dispatch';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { z } from 'zod';
import { EventBus } from '../src/index.js';
import { TooltraceCallbackHandler, traceLangChainTools } from '../src/langchain/index.js';
import { traceToolCalls } from '../src/otel/index.js';
import { startOtlpReceiver, type ReceivedSpan } from '../src/testing/index.js';

const receiver = await startOtlpReceiver();
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
});
provider.register();
const bus = new EventBus();
const tracing = traceToolCalls(bus, { liveUpdates: false });

const searchDocs = tool(
  async function* ({ query }, config) {
    yield `searching for ${query}`;
    await dispatchCustomEvent('progress', { progress: 0.5 }, config);
    // A span the tool's own code starts nests under its execute_tool span.
    await trace.getTracer('docs').startActiveSpan('rank results', async (span) => {
      await sleep(10);
      span.end();
    });
    yield 'streaming.md';
    return '1 document: streaming.md';
  },
  {
    name: 'search_docs',
    description: 'Searches the documentation',
    schema: z.object({ query: z.string() }),
  },
);

/** Answers with a tool call, then with text; your provider's chat model goes here. */
class ScriptedModel extends BaseChatModel {
  readonly replies = [
    new AIMessage({
      content: '',
      tool_calls: [{ id: 'call_1', name: 'search_docs', args: { query: 'spans' } }],
      usage_metadata: { input_tokens: 42, output_tokens: 9, total_tokens: 51 },
    }),
    new AIMessage({
      content: 'See streaming.md.',
      usage_metadata: { input_tokens: 60, output_tokens: 5, total_tokens: 65 },
    }),
  ];

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(): this {
    return this;
  }

  _generate(): Promise<ChatResult> {
    return Promise.resolve({ generations: [{ message: this.replies.shift()!, text: '' }] });
  }
}

const agent = createReactAgent({
  llm: new ScriptedModel({}),
  tools: traceLangChainTools([searchDocs], bus),
});
const { messages } = await agent.invoke(
  { messages: [{ role: 'user', content: 'Where are spans explained?' }] },
  { callbacks: [new TooltraceCallbackHandler(bus)], configurable: { thread_id: 'thread-1' } },
);
console.log(`answer: ${messages.at(-1)?.text ?? ''}`);

await tracing.shutdown();
await provider.shutdown();
const spans = await receiver.waitForSpans(5);

/** Prints `span` and its children, indented, with a span's stream events in time order. */
function print(span: ReceivedSpan, depth: number): void {
  const events = [...span.events]
    .sort((a, b) => (a.timeUnixNano < b.timeUnixNano ? -1 : 1))
    .map((event) => event.name);
  const tokens = span.attributes['gen_ai.usage.input_tokens'] as number | undefined;
  const detail =
    events.length > 0
      ? `  [${events.join(', ')}]`
      : tokens === undefined
        ? ''
        : `  (${tokens} in, ${span.attributes['gen_ai.usage.output_tokens'] as number} out)`;
  console.log(`${'  '.repeat(depth)}${span.name}${detail}`);
  const children = spans
    .filter((child) => child.parentSpanId === span.spanId)
    .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1));
  for (const child of children) print(child, depth + 1);
}
for (const root of spans.filter((span) => span.parentSpanId === '')) print(root, 0);
await receiver.close();
