/**
 * A tool's own HTTP requests inside its `execute_tool` span, with OpenTelemetry's HTTP
 * auto-instrumentation. Run it with `npx tsx examples/http-instrumentation.ts`.
 *
 * The application registers a NodeTracerProvider (the AsyncLocalStorage context manager) and
 * `@opentelemetry/instrumentation-http`, then `traceToolCalls(bus)`. A streaming tool fetches a
 * page from a local server while it runs: tooltrace runs the tool's code inside its call's span,
 * so the client span the instrumentation makes for the request (and the server span behind it)
 * nest under `execute_tool fetch_page`, in the agent's trace, instead of starting traces of their
 * own. `@opentelemetry/sdk-node`'s NodeSDK sets up the same two things; it is not used here
 * because its 0.223 release pins an older SDK than this project's.
 */
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  EventBus,
  StreamingToolPlugin,
  TOOL_INVOKE,
  TOOL_RESULT,
  type ChannelTool,
  type ToolEvent,
  type ToolResult,
} from '../src/index.js';
import { traceToolCalls } from '../src/otel/index.js';
import { startOtlpReceiver } from '../src/testing/index.js';

const receiver = await startOtlpReceiver();
const provider = new NodeTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
});
provider.register();
registerInstrumentations({
  instrumentations: [
    // The exporter's POSTs to the embedded OTLP receiver (in this same process) are not the
    // application's work, on either side.
    new HttpInstrumentation({
      ignoreOutgoingRequestHook: (request) => request.path?.startsWith('/v1/') === true,
      ignoreIncomingRequestHook: (request) => request.url?.startsWith('/v1/') === true,
    }),
  ],
});
// Loaded after the instrumentation is registered, so it is the patched module. (An ESM
// application loads its instrumentation first instead, with `node --import`.)
const http = createRequire(import.meta.url)('node:http') as typeof Http;

const server = http.createServer((_request, response) => response.end('<h1>spans</h1>'));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

const fetchPage: ChannelTool = {
  name: 'fetch_page',
  async *stream(): AsyncGenerator<ToolEvent> {
    yield { kind: 'progress', progress: 0, payload: 'fetching' };
    const page = await new Promise<string>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${port}/docs`, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
    yield { kind: 'complete', payload: `${page.length} bytes` };
  },
};

const bus = new EventBus();
const plugin = new StreamingToolPlugin('fetch_page', () => fetchPage);
plugin.attach(bus);
const tracing = traceToolCalls(bus);

const result = await new Promise<ToolResult>((resolve) => {
  const off = bus.subscribe<ToolResult>(TOOL_RESULT, (event) => {
    off();
    resolve(event.payload);
  });
  bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'fetch_page', arguments: {} });
});
console.log(`tool result: ${result.output}`);

await plugin.shutdown();
await tracing.shutdown();
await provider.shutdown();
await new Promise((resolve) => server.close(resolve));
const spans = (await receiver.waitForSpans(3)).sort((left, right) =>
  left.startTimeUnixNano < right.startTimeUnixNano ? -1 : 1,
);
const names = new Map(spans.map((span) => [span.spanId, span.name]));
for (const span of spans) {
  console.log(`${span.name}  parent: ${names.get(span.parentSpanId) ?? '(root)'}`);
}
console.log(new Set(spans.map((span) => span.traceId)).size === 1 ? 'one trace' : 'several traces');
await receiver.close();
