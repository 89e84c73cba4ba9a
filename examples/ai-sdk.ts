/**
 * AI SDK tools, traced with their preliminary results. Run it with `npx tsx examples/ai-sdk.ts`.
 *
 * A generator tool (it yields preliminary results before its final one) is wrapped with
 * `traceAiSdkTools` and run by `generateText`. The model is the AI SDK's scripted mock, so the
 * example needs no network or key: put your provider's model in its place. The spans go to an
 * embedded OTLP receiver, and the program prints what arrived.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { EventBus } from '../src/index.js';
import { traceAiSdkTools } from '../src/ai-sdk/index.js';
import { traceToolCalls } from '../src/otel/index.js';
import { startOtlpReceiver } from '../src/testing/index.js';

const receiver = await startOtlpReceiver();
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
});
provider.register();
const bus = new EventBus();
const tracing = traceToolCalls(bus, { liveUpdates: false });

const tools = traceAiSdkTools(
  {
    forecast: tool({
      description: 'Forecasts the weather for a city',
      inputSchema: jsonSchema<{ city: string }>({
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      }),
      async *execute({ city }) {
        yield { city, status: 'loading' as const };
        // A span the tool's own code starts nests under its execute_tool span.
        await trace.getTracer('weather').startActiveSpan('GET /forecast', async (span) => {
          await sleep(20);
          span.end();
        });
        yield { city, status: 'ready' as const, forecast: ['sun', 'rain', 'sun'] };
      },
    }),
  },
  bus,
);

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const model = new MockLanguageModelV3({
  doGenerate: [
    {
      content: [
        {
          type: 'tool-call',
          toolCallId: 'call_1',
          toolName: 'forecast',
          input: '{"city":"Paris"}',
        },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    },
    {
      content: [{ type: 'text', text: 'Sun, then rain, then sun in Paris.' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    },
  ],
});

const result = await generateText({ model, tools, prompt: 'Paris?', stopWhen: stepCountIs(2) });
console.log(`text: ${result.text}`);
console.log(`tool output: ${JSON.stringify(result.steps[0]!.toolResults[0]!.output)}`);

await tracing.shutdown();
await provider.shutdown();
const spans = await receiver.waitForSpans(2);
const toolSpan = spans.find((span) => span.name === 'execute_tool forecast')!;
const httpSpan = spans.find((span) => span.name === 'GET /forecast')!;
const partials = toolSpan.events.filter((event) => event.name === 'tool.stream.partial').length;
console.log(
  `${toolSpan.name}: call ${String(toolSpan.attributes['gen_ai.tool.call.id'])}, ${partials} partials`,
);
console.log(
  `  ${httpSpan.name}: child of the tool span: ${httpSpan.parentSpanId === toolSpan.spanId}`,
);
await receiver.close();
