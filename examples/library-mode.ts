/**
 * Library mode: tooltrace inside an application that already has OpenTelemetry set up.
 * Run it with `npx tsx examples/library-mode.ts`.
 *
 * The app registers a NodeTracerProvider (so the AsyncLocalStorage context manager is active)
 * with a batch processor and an OTLP exporter, sending to `OTEL_EXPORTER_OTLP_ENDPOINT` when it
 * is set, else to an embedded receiver. One call, `traceToolCalls(bus)`, turns the agent's tool
 * calls into spans of that provider. The agent emits `tool.invoke` while the app's request span
 * is active, so the tool's span becomes its child, in the same trace.
 */
import { SpanKind, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EventBus,
  StreamingToolPlugin,
  TOOL_INVOKE,
  TOOL_RESULT,
  type ChannelTool,
  type ToolCall,
  type ToolEvent,
  type ToolResult,
} from '../src/index.js';
import { traceToolCalls } from '../src/otel/index.js';
import { startOtlpReceiver } from '../src/testing/index.js';

// The application's existing OpenTelemetry setup.
const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
const receiver = endpoint === undefined ? await startOtlpReceiver() : undefined;
const provider = new NodeTracerProvider({
  spanProcessors: [
    new BatchSpanProcessor(
      new OTLPTraceExporter({ url: receiver?.tracesUrl ?? `${endpoint}/v1/traces` }),
      // Export every 500 ms rather than the default 5 s, so in-flight snapshots of long calls
      // reach the backend within about 2 s.
      { scheduledDelayMillis: 500 },
    ),
  ],
});
provider.register(); // the global provider, with the AsyncLocalStorage context manager

// The agent's bus and one streaming tool.
const bus = new EventBus();
const searchDocs: ChannelTool = {
  name: 'search_docs',
  async *stream(signal): AsyncGenerator<ToolEvent> {
    for (const hit of ['streaming.md', 'tracing.md']) {
      await sleep(10, undefined, { signal });
      yield { kind: 'partial', payload: hit };
    }
    yield { kind: 'complete', payload: '2 documents' };
  },
};
new StreamingToolPlugin('search_docs', () => searchDocs).attach(bus);

// tooltrace: every tool call on the bus becomes a span of the global provider.
const tracing = traceToolCalls(bus);

/** What the agent does: emit tool.invoke and wait for the tool.result with the same id. */
function callTool(call: ToolCall): Promise<ToolResult> {
  return new Promise((resolve) => {
    const off = bus.subscribe<ToolResult>(TOOL_RESULT, (event) => {
      if (event.payload.id !== call.id) return;
      off();
      resolve(event.payload);
    });
    bus.emit(TOOL_INVOKE, call);
  });
}

// An incoming request: the span is active while the agent calls its tool.
const tracer = trace.getTracer('example-app');
const result = await tracer.startActiveSpan(
  'POST /chat',
  { kind: SpanKind.SERVER },
  async (request) => {
    const answer = await callTool({ id: 'tc_1', name: 'search_docs', arguments: { q: 'spans' } });
    request.end();
    return answer;
  },
);
console.log(`tool result: ${result.output}`);

await tracing.shutdown(); // ends calls still open, flushes the provider
await provider.shutdown();
if (receiver === undefined) {
  console.log(`spans sent to ${endpoint}`);
} else {
  // Parents first: the SDK's clock and the bus's event clock may put a child's start a few
  // microseconds before its parent's, so start times alone do not give the tree's order.
  const spans = await receiver.waitForSpans(2);
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const depth = (span: (typeof spans)[number]): number => {
    const parent = byId.get(span.parentSpanId);
    return parent === undefined ? 0 : depth(parent) + 1;
  };
  spans.sort((left, right) => depth(left) - depth(right));
  const names = new Map(spans.map((span) => [span.spanId, span.name]));
  for (const span of spans) {
    const parent = names.get(span.parentSpanId) ?? '(root)';
    console.log(`${span.name}  parent: ${parent}  events: ${span.events.length}`);
  }
  const traces = new Set(spans.map((span) => span.traceId));
  console.log(traces.size === 1 ? 'one trace' : `${traces.size} traces`);
  await receiver.close();
}
