/**
 * tooltrace in an application set up with OpenTelemetry's NodeSDK, the setup most Node.js
 * services have: `new NodeSDK({ traceExporter, instrumentations })`, then `traceToolCalls(bus)`.
 * Run it with `npx tsx examples/node-sdk.ts`.
 *
 * An HTTP endpoint (`POST /chat`, traced by `@opentelemetry/instrumentation-http`) calls a
 * streaming tool on the bus. The tool's span is a child of the request's server span (it is
 * emitted while that span is active), and a span the tool's own code starts is a child of the
 * tool's span (tooltrace runs the tool inside it). The stream becomes span events.
 *
 * Spans go where `OTEL_EXPORTER_OTLP_ENDPOINT` says; without it, to an OTLP receiver started in
 * this process (`tooltrace/testing`), and the trace is printed. It imports tooltrace by its
 * package name, so it runs as it is in an application that installed `tooltrace`,
 * `@opentelemetry/api`, `@opentelemetry/sdk-node`, `@opentelemetry/exporter-trace-otlp-http` and
 * `@opentelemetry/instrumentation-http` (with SDK 2 on Node 20, or SDK 3 on Node 22.15+).
 */
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventBus, StreamingToolPlugin, TOOL_INVOKE, TOOL_RESULT } from 'tooltrace';
import type { ChannelTool, ToolCall, ToolEvent, ToolResult } from 'tooltrace';
import { traceToolCalls } from 'tooltrace/otel';
import { startOtlpReceiver } from 'tooltrace/testing';

const receiver =
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? await startOtlpReceiver() : undefined;
const sdk = new NodeSDK({
  serviceName: 'chat-service',
  traceExporter: new OTLPTraceExporter(receiver === undefined ? {} : { url: receiver.tracesUrl }),
  // The exporter's own POSTs to the OTLP receiver are not the application's work.
  instrumentations: [
    new HttpInstrumentation({
      ignoreOutgoingRequestHook: (request) => request.path?.startsWith('/v1/') === true,
      ignoreIncomingRequestHook: (request) => request.url?.startsWith('/v1/') === true,
    }),
  ],
});
sdk.start(); // the AsyncLocalStorage context manager (parents follow async work) and HTTP spans
// Loaded after the SDK started, so it is the instrumented module. (An ES module application
// starts the SDK first instead, from a file given to `node --import`.)
const http = createRequire(import.meta.url)('node:http') as typeof Http;

const bus = new EventBus();
const tracing = traceToolCalls(bus);

const searchDocs: ChannelTool = {
  name: 'search_docs',
  async *stream(): AsyncGenerator<ToolEvent> {
    yield { kind: 'progress', progress: 0.5, payload: 'index read' };
    yield { kind: 'partial', payload: 'streaming.md' };
    // The tool's own work: a span of its own, under the tool's span.
    const ranked = await trace
      .getTracer('search-docs')
      .startActiveSpan('rank results', async (span) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        span.end();
        return ['streaming.md', 'spans.md'];
      });
    yield { kind: 'progress', progress: 1, payload: 'ranked' };
    yield { kind: 'complete', payload: `${ranked.length} documents` };
  },
};
const plugin = new StreamingToolPlugin('search_docs', () => searchDocs);
plugin.attach(bus);

/** Emits `tool.invoke` and resolves with its `tool.result`. */
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

// The request's server span is active in the handler: the tool call it makes is its child.
const server = http.createServer((_request, response) => {
  void callTool({ id: 'tc_1', name: 'search_docs', arguments: { q: 'spans' } }).then((result) =>
    response.end(String(result.output)),
  );
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

const answer = await new Promise<string>((resolve, reject) => {
  const request = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/chat' });
  request.on('response', (response) => {
    let body = '';
    response.on('data', (chunk: Buffer) => (body += chunk.toString()));
    response.on('end', () => resolve(body));
  });
  request.on('error', reject);
  request.end('{"message":"find the docs about spans"}');
});
console.log(`POST /chat answered: ${answer}`);

await new Promise((resolve) => server.close(resolve));
await plugin.shutdown();
await tracing.shutdown(); // ends what is still open (marked), then flushes
await sdk.shutdown();

if (receiver !== undefined) {
  const spans = await receiver.waitForSpans(4);
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const depth = (span: (typeof spans)[number]): number => {
    const parent = byId.get(span.parentSpanId);
    return parent === undefined ? 0 : depth(parent) + 1;
  };
  spans.sort((left, right) => depth(left) - depth(right));
  for (const span of spans) {
    const stream = span.events.map((event) => event.name).join(', ');
    console.log(`${'  '.repeat(depth(span))}${span.name}${stream === '' ? '' : `  [${stream}]`}`);
  }
  console.log(
    new Set(spans.map((span) => span.traceId)).size === 1 ? 'one trace' : 'several traces',
  );
  await receiver.close();
}
