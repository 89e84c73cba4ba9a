/**
 * Sidecar mode: the agent sets up no OpenTelemetry (no provider, no exporter); it forwards its bus
 * events over HTTP to a tooltrace sidecar, which turns them into spans and exports them over OTLP.
 * Run it with `npx tsx examples/forward-to-sidecar.ts`.
 *
 * To keep the example in one file, the sidecar runs in this process (`runSidecar`) and exports to
 * an embedded OTLP receiver. In production it is its own process or container —
 * `tooltrace sidecar --listen 127.0.0.1:4319 --otlp-endpoint http://collector:4318` — and the
 * agent only needs `forwardEvents(bus, { url })`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EventBus,
  StreamingToolPlugin,
  TOOL_INVOKE,
  TOOL_RESULT,
  type ChannelTool,
  type ToolEvent,
  type ToolResult,
} from '../src/index.js';
import { forwardEvents } from '../src/forward/index.js';
import { runSidecar } from '../src/sidecar/index.js';
import { startOtlpReceiver } from '../src/testing/index.js';

// The sidecar, exporting to a receiver that stands in for an OpenTelemetry Collector.
const collector = await startOtlpReceiver();
const sidecar = await runSidecar({
  listen: ['127.0.0.1:0'],
  otlpEndpoint: collector.url,
  statusIntervalMs: 0,
  log: () => {},
});
const url = sidecar.urls[0]!;
console.log(`sidecar listening on ${url}`);

// The agent: a bus, a streaming tool, and a forwarder to the sidecar.
const bus = new EventBus();
bus.setDefaultCausation({ sessionId: 'session-1', agentId: 'planner' });
const forwarder = forwardEvents(bus, { url });

const indexFiles: ChannelTool = {
  name: 'index_files',
  async *stream(signal): AsyncGenerator<ToolEvent> {
    const files = ['a.ts', 'b.ts', 'c.ts', 'd.ts'];
    for (const [index, file] of files.entries()) {
      await sleep(5, undefined, { signal });
      yield { kind: 'progress', progress: (index + 1) / files.length, payload: file };
    }
    yield { kind: 'complete', payload: { indexed: files.length } };
  },
};
const plugin = new StreamingToolPlugin('index_files', () => indexFiles);
plugin.attach(bus);

const result = new Promise<ToolResult>((resolve) => {
  bus.subscribe<ToolResult>(TOOL_RESULT, (event) => resolve(event.payload));
});
bus.emit(TOOL_INVOKE, { id: 'tc_1', name: 'index_files', arguments: { root: 'src/' } });
console.log(`tool result: ${(await result).output}`);

// Send what is queued, then stop the sidecar: it ends open calls and flushes its export.
await plugin.shutdown();
await forwarder.close();
console.log(`forwarded ${forwarder.stats().sent} events`);
await sidecar.stop();

for (const span of await collector.waitForSpans(1)) {
  const status = ['UNSET', 'OK', 'ERROR'][span.status.code];
  const service = String(span.resource['service.name']);
  console.log(`${service} exported ${span.name}  ${status}  ${span.events.length} span events`);
}
await collector.close();
