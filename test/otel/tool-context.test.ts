import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/events/index.js';
import {
  StreamingToolPlugin,
  bridge,
  type ChannelTool,
  type ToolEvent,
} from '../../src/streamtool/index.js';
import { spanOfCall, startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;
let instrumentation: HttpInstrumentation | undefined;

afterEach(async () => {
  instrumentation?.disable();
  instrumentation = undefined;
  await harness?.close();
  harness = undefined;
  trace.disable();
  context.disable();
  propagation.disable();
});

/** A tool that starts spans of its own: one after an `await`, one after a `yield`. */
function spanMakingTool(name: string): ChannelTool {
  const tracer = trace.getTracer('tool-code');
  return {
    name,
    async *stream(): AsyncGenerator<ToolEvent> {
      await new Promise((resolve) => setTimeout(resolve, 1));
      tracer.startSpan('after await').end();
      yield { kind: 'partial', payload: 'half' };
      tracer.startSpan('after yield').end();
      yield { kind: 'complete', payload: 'done' };
    },
  };
}

describe('traceToolCalls() tool code context', () => {
  it('runs a StreamingToolPlugin tool inside its execute_tool span, across awaits and yields', async () => {
    harness = await startTracingHarness({ register: true });
    const { bus } = harness;
    const plugin = new StreamingToolPlugin('maker', () => spanMakingTool('maker'));
    plugin.attach(bus);
    bus.emit('tool.invoke', { id: 'tc_1', name: 'maker', arguments: {} });
    await expect.poll(() => harness!.tracing.stats().spansEnded.result).toBe(1);

    const spans = await harness.spans(3);
    const tool = spanOfCall(spans, 'tc_1');
    for (const name of ['after await', 'after yield']) {
      const own = spans.find((span) => span.name === name);
      expect(own?.parentSpanId).toBe(tool.spanId);
      expect(own?.traceId).toBe(tool.traceId);
    }
    await plugin.shutdown();
  });

  it('runs a bridge() started from setImmediate in a tool.invoke handler inside the span', async () => {
    harness = await startTracingHarness({ register: true });
    const { bus } = harness;
    bus.subscribe<ToolCall>('tool.invoke', (event) => {
      setImmediate(() => {
        void bridge(bus, spanMakingTool('later'), event.payload);
      });
    });
    bus.emit('tool.invoke', { id: 'tc_later', name: 'later', arguments: {} });
    await expect.poll(() => harness!.tracing.stats().spansEnded.result).toBe(1);

    const spans = await harness.spans(3);
    const tool = spanOfCall(spans, 'tc_later');
    expect(spans.find((span) => span.name === 'after await')?.parentSpanId).toBe(tool.spanId);
    expect(spans.find((span) => span.name === 'after yield')?.parentSpanId).toBe(tool.spanId);
  });

  it('makes the client span of an HTTP request the tool sends a child of its span (real HTTP instrumentation)', async () => {
    harness = await startTracingHarness({ register: true });
    instrumentation = new HttpInstrumentation();
    instrumentation.setTracerProvider(harness.provider);
    instrumentation.enable();
    // Loaded through require after enabling, so the instrumentation's hook patches it.
    const http = createRequire(import.meta.url)('node:http') as typeof Http;
    const server = http.createServer((_request, response) => response.end('pong'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fetcher: ChannelTool = {
      name: 'fetch_page',
      async *stream(): AsyncGenerator<ToolEvent> {
        yield { kind: 'progress', progress: 0 };
        const body = await new Promise<string>((resolve, reject) => {
          http
            .get(`http://127.0.0.1:${port}/page`, (response) => {
              let text = '';
              response.on('data', (chunk: Buffer) => (text += chunk.toString()));
              response.on('end', () => resolve(text));
            })
            .on('error', reject);
        });
        yield { kind: 'complete', payload: body };
      },
    };
    const plugin = new StreamingToolPlugin('fetch_page', () => fetcher);
    plugin.attach(harness.bus);
    harness.bus.emit('tool.invoke', { id: 'tc_http', name: 'fetch_page', arguments: {} });
    await expect.poll(() => harness!.tracing.stats().spansEnded.result).toBe(1);
    await plugin.shutdown();
    await new Promise((resolve) => server.close(resolve));

    const spans = await harness.spans(3);
    const tool = spanOfCall(spans, 'tc_http');
    const client = spans.find((span) => span.kind === 3); // CLIENT
    expect(client).toBeDefined();
    expect(client!.parentSpanId).toBe(tool.spanId);
    expect(client!.traceId).toBe(tool.traceId);
    // The server span continues the same trace through the propagated traceparent.
    const serverSpan = spans.find((span) => span.kind === 2); // SERVER
    expect(serverSpan?.parentSpanId).toBe(client!.spanId);
  });

  it('changes nothing for handlers when no tracing is attached', async () => {
    harness = await startTracingHarness({ register: true });
    await harness.tracing.shutdown();
    const { bus } = harness;
    let active: unknown = 'unset';
    bus.subscribe('tool.invoke', () => {
      active = trace.getActiveSpan();
    });
    bus.emit('tool.invoke', { id: 'tc_x', name: 'x', arguments: {} });
    expect(active).toBeUndefined();
  });
});
