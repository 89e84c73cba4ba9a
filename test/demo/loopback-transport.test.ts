import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopbackTransport } from '../../src/demo/loopback-transport.js';
import { ReliableSpanProcessor } from '../../src/sidecar/export/index.js';

describe('LoopbackTransport', () => {
  it('receives what the span processor exported, decoded from the OTLP protobuf request', async () => {
    const receiver = new LoopbackTransport();
    const processor = new ReliableSpanProcessor(receiver);
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer('loopback-test', '1.2.3');
    const parent = tracer.startSpan('execute_tool search', {
      attributes: { 'gen_ai.tool.name': 'search', 'tooltrace.stream.progress': 1, count: -3 },
    });
    parent.addEvent('tool.stream.partial', { 'tooltrace.stream.sequence': 2 });
    parent.setStatus({ code: SpanStatusCode.ERROR, message: 'price feed returned HTTP 503' });
    parent.end();
    await processor.forceFlush();

    expect(receiver.spans).toHaveLength(1);
    const [span] = receiver.spans;
    expect(span).toMatchObject({
      traceId: parent.spanContext().traceId,
      spanId: parent.spanContext().spanId,
      name: 'execute_tool search',
      attributes: { 'gen_ai.tool.name': 'search', 'tooltrace.stream.progress': 1, count: -3 },
      events: [{ name: 'tool.stream.partial', attributes: { 'tooltrace.stream.sequence': 2 } }],
      status: { code: 2, message: 'price feed returned HTTP 503' },
      scope: { name: 'loopback-test', version: '1.2.3' },
    });
    await provider.shutdown();
  });

  it('takes nothing once shut down', async () => {
    const receiver = new LoopbackTransport();
    await receiver.shutdown();
    const outcome = await receiver.send(Buffer.alloc(0));
    expect(outcome).toMatchObject({ kind: 'permanent', status: 'shutdown' });
    expect(receiver.spans).toEqual([]);
  });

  it('refuses for good a body that is not an OTLP request', async () => {
    const receiver = new LoopbackTransport();
    const outcome = await receiver.send(Buffer.from([0x0a, 0x05, 0x00]));
    expect(outcome).toMatchObject({ kind: 'permanent', status: '400' });
  });
});
