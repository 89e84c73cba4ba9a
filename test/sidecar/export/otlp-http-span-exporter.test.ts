import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OtlpHttpSpanExporter } from '../../../src/sidecar/export/index.js';
import { OtlpTraceEncoder } from '../../../src/otlp/index.js';
import { encodeAll } from '../../otlp/encode-all.js';
import {
  decodeTraceRequest,
  startOtlpReceiver,
  type OtlpReceiver,
} from '../../../src/testing/index.js';
import { VERSION } from '../../../src/version.js';
import { parseRetryAfter } from '../../../src/wire/index.js';
import { sendOnce } from './send-once.js';

/** Spans covering every field the encoder writes, from two tracers (two scopes). */
function variedSpans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ 'service.name': 'enc', 'host.cpus': 2, ratio: 0.5, tags: ['a'] }),
    ),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('first', '1.0.0');
  const other = provider.getTracer('second');
  const parent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState('vendor=value'),
  });
  const span = tracer.startSpan(
    'execute_tool söke ☃',
    {
      kind: SpanKind.CLIENT,
      startTime: [1_777_636_800, 123_456_789],
      attributes: {
        text: 'plain',
        unicode: 'héllo 𝄞 wörld',
        long: 'x'.repeat(300),
        longUnicode: 'ü'.repeat(100),
        integer: 42,
        negative: -7,
        large: 2 ** 60,
        double: -0.25,
        flag: true,
        no: false,
        strings: ['a', 'b'],
        numbers: [1, 2.5],
        empty: '',
      },
    },
    parent,
  );
  span.addLink({
    context: {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.NONE,
    },
    attributes: { why: 'follows' },
  });
  for (let index = 0; index < 20; index += 1) {
    span.addEvent(`event ${index}`, { index, note: 'n'.repeat(index * 10) }, [
      1_777_636_801,
      index,
    ]);
  }
  span.setStatus({ code: 2, message: 'failed: ☃' });
  span.end([1_777_636_802, 999_999_999]);
  const root = other.startSpan('root', { attributes: { 'a.b': 1 } });
  root.setStatus({ code: 1 });
  root.end();
  for (let index = 0; index < 300; index += 1) {
    tracer.startSpan(`many ${index}`, { attributes: { index } }).end();
  }
  return memory.getFinishedSpans();
}

describe('OtlpTraceEncoder', () => {
  it('writes what the stock exporter sends, as an independent decoder reads it', async () => {
    const receiver = await startOtlpReceiver();
    const spans = variedSpans();
    const stockExporter = new OTLPTraceExporter({ url: receiver.tracesUrl });
    await new Promise((resolve) => stockExporter.export(spans, resolve));
    await stockExporter.shutdown();
    const stock = [...receiver.spans];
    await receiver.close();
    const encoder = new OtlpTraceEncoder();

    const ours = decodeTraceRequest(
      encodeAll(encoder.openBatch(), spans),
      'application/x-protobuf',
    );
    expect(stock).toHaveLength(spans.length);
    expect(ours).toEqual(stock);
    // The encoder keeps its buffer: a second, smaller request is not polluted by the first.
    expect(
      decodeTraceRequest(encodeAll(encoder.openBatch(), spans.slice(0, 1)), 'protobuf'),
    ).toEqual(stock.slice(0, 1));
  });
});

describe('OtlpHttpSpanExporter', () => {
  let receiver: OtlpReceiver;
  const servers: Server[] = [];

  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });

  afterEach(async () => {
    await receiver.close();
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('posts protobuf with the configured headers, gzip when asked', async () => {
    const spans = variedSpans();
    const exporter = new OtlpHttpSpanExporter({
      url: receiver.tracesUrl,
      headers: { 'x-api-key': 'k' },
      compression: 'gzip',
    });

    expect((await sendOnce(exporter, spans)).kind).toBe('success');
    const [request] = receiver.requests;
    expect(request!.contentType).toBe('application/x-protobuf');
    expect(request!.contentEncoding).toBe('gzip');
    expect(request!.headers['x-api-key']).toBe('k');
    expect(request!.headers['user-agent']).toBe(`tooltrace/${VERSION}`);
    expect(receiver.spans).toHaveLength(spans.length);
    await exporter.shutdown();
  });

  it('posts JSON with the same User-Agent when asked for JSON', async () => {
    const spans = variedSpans().slice(0, 3);
    const exporter = new OtlpHttpSpanExporter({ url: receiver.tracesUrl, encoding: 'json' });

    expect(await sendOnce(exporter, spans)).toEqual({
      kind: 'success',
      rejectedSpans: 0,
      rejectionMessage: '',
    });
    const [request] = receiver.requests;
    expect(request!.contentType).toBe('application/json');
    expect(request!.headers['user-agent']).toBe(`tooltrace/${VERSION}`);
    expect(receiver.spans.map((span) => span.encoding)).toEqual(['json', 'json', 'json']);
    await exporter.shutdown();
  });

  it('tells a permanent answer from a retryable one, with the plain-text body a proxy sends', async () => {
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(403, { 'Content-Type': 'text/plain' }).end('forbidden by proxy\n');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
    const exporter = new OtlpHttpSpanExporter({ url });

    expect(await sendOnce(exporter, variedSpans().slice(0, 1))).toEqual({
      kind: 'permanent',
      status: '403',
      reason: `403 Forbidden from ${url} — check the credentials (--otlp-header, OTEL_EXPORTER_OTLP_HEADERS): forbidden by proxy`,
    });
    await exporter.shutdown();
  });

  it('reports a refusal with its status and Retry-After, and a network failure', async () => {
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(503, { 'Retry-After': '3' }).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const exporter = new OtlpHttpSpanExporter({ url: `http://127.0.0.1:${port}/v1/traces` });

    const refused = await sendOnce(exporter, variedSpans().slice(0, 1));
    expect(refused).toMatchObject({ kind: 'retryable', status: '503', retryAfterMs: 3000 });

    await new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    const unreachable = await sendOnce(exporter, variedSpans().slice(0, 1));
    expect(unreachable).toMatchObject({ kind: 'retryable', status: 'network' });
    await exporter.shutdown();
  });

  it('cuts a request that hangs when it is shut down', async () => {
    const server = createServer(() => {});
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const exporter = new OtlpHttpSpanExporter({
      url: `http://127.0.0.1:${port}/v1/traces`,
      timeoutMs: 60_000,
    });

    const pending = sendOnce(exporter, variedSpans().slice(0, 1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await exporter.shutdown();
    expect((await pending).kind).not.toBe('success');
    expect(await sendOnce(exporter, [])).toMatchObject({ kind: 'permanent', status: 'shutdown' });
  });
});

describe('parseRetryAfter()', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');

  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Fri, 01 May 2026 12:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Fri, 01 May 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });
});
