import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReliableSpanProcessor } from '../../../src/sidecar/export/index.js';
import { OtlpGrpcSpanExporter } from '../../../src/sidecar/export/otlp-grpc-span-exporter.js';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from '../../../src/testing/index.js';
import { VERSION } from '../../../src/version.js';
import { sendOnce } from './send-once.js';

/** GRPC status codes, as the OTLP/gRPC specification names them. */
const CODE = {
  cancelled: 1,
  deadlineExceeded: 4,
  notFound: 5,
  permissionDenied: 7,
  resourceExhausted: 8,
  aborted: 10,
  outOfRange: 11,
  unimplemented: 12,
  unavailable: 14,
  dataLoss: 15,
  unauthenticated: 16,
  invalidArgument: 3,
} as const;

function spans(count: number) {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(memory)],
  }).getTracer('grpc-test');
  for (let index = 0; index < count; index += 1) {
    tracer.startSpan(`span ${index}`, { attributes: { index } }).end();
  }
  return memory.getFinishedSpans();
}

describe('OtlpGrpcSpanExporter', () => {
  let receiver: OtlpGrpcReceiver;
  let exporter: OtlpGrpcSpanExporter;

  beforeEach(async () => {
    receiver = await startOtlpGrpcReceiver();
  });

  afterEach(async () => {
    await exporter?.shutdown();
    await receiver.close();
  });

  it('exports over OTLP/gRPC with metadata and one User-Agent', async () => {
    exporter = new OtlpGrpcSpanExporter({ url: receiver.url, headers: { 'X-Api-Key': 'k' } });

    expect(await sendOnce(exporter, spans(3))).toEqual({
      kind: 'success',
      rejectedSpans: 0,
      rejectionMessage: '',
    });
    expect(receiver.spans.map((span) => [span.name, span.attributes.index])).toEqual([
      ['span 0', 0],
      ['span 1', 1],
      ['span 2', 2],
    ]);
    const [request] = receiver.requests;
    expect(request!.metadata['x-api-key']).toBe('k');
    expect(request!.metadata['user-agent']).toMatch(new RegExp(`^tooltrace/${VERSION} `));
  });

  it('compresses messages with gzip when asked', async () => {
    // grpc-js hides the encoding from services: a bare HTTP/2 server sees the frames as sent.
    const seen: { encoding: unknown; compressedFlag: number }[] = [];
    const server = createHttp2Server();
    server.on('stream', (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        seen.push({ encoding: headers['grpc-encoding'], compressedFlag: chunks[0]![0]! });
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc' },
          { waitForTrailers: true },
        );
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(Buffer.alloc(5));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    exporter = new OtlpGrpcSpanExporter({ url: `http://127.0.0.1:${port}`, compression: 'gzip' });

    expect((await sendOnce(exporter, spans(20))).kind).toBe('success');
    expect(seen).toEqual([{ encoding: 'gzip', compressedFlag: 1 }]);
    await exporter.shutdown();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['CANCELLED', CODE.cancelled],
    ['DEADLINE_EXCEEDED', CODE.deadlineExceeded],
    ['ABORTED', CODE.aborted],
    ['OUT_OF_RANGE', CODE.outOfRange],
    ['UNAVAILABLE', CODE.unavailable],
    ['DATA_LOSS', CODE.dataLoss],
  ])('calls %s retryable', async (name, code) => {
    exporter = new OtlpGrpcSpanExporter({ url: receiver.url });
    receiver.answerNext({ code, message: 'busy' });

    expect(await sendOnce(exporter, spans(1))).toEqual({
      kind: 'retryable',
      status: name,
      reason: `${name} from ${receiver.url}/: busy`,
      retryAfterMs: undefined,
    });
  });

  it.each([
    ['INVALID_ARGUMENT', CODE.invalidArgument],
    ['NOT_FOUND', CODE.notFound],
    ['PERMISSION_DENIED', CODE.permissionDenied],
    ['UNAUTHENTICATED', CODE.unauthenticated],
    ['UNIMPLEMENTED', CODE.unimplemented],
    ['RESOURCE_EXHAUSTED', CODE.resourceExhausted],
  ])('calls %s permanent (RESOURCE_EXHAUSTED without RetryInfo)', async (name, code) => {
    exporter = new OtlpGrpcSpanExporter({ url: receiver.url });
    receiver.answerNext({ code, message: 'no' });

    const outcome = await sendOnce(exporter, spans(1));
    expect(outcome).toMatchObject({ kind: 'permanent', status: name });
    expect(outcome.kind === 'permanent' && outcome.reason).toMatch(
      new RegExp(`^${name} from .*: no$`),
    );
  });

  it('retries RESOURCE_EXHAUSTED with RetryInfo, after the delay it names', async () => {
    exporter = new OtlpGrpcSpanExporter({ url: receiver.url });
    receiver.answerNext({ code: CODE.resourceExhausted, message: 'slow down', retryDelayMs: 1500 });

    expect(await sendOnce(exporter, spans(1))).toMatchObject({
      kind: 'retryable',
      status: 'RESOURCE_EXHAUSTED',
      retryAfterMs: 1500,
    });
  });

  it('reads partial_success', async () => {
    exporter = new OtlpGrpcSpanExporter({ url: receiver.url });
    receiver.answerNext({ partialSuccess: { rejectedSpans: 2, errorMessage: 'too big' } });

    expect(await sendOnce(exporter, spans(4))).toEqual({
      kind: 'success',
      rejectedSpans: 2,
      rejectionMessage: 'too big',
    });
  });

  it('drives the ReliableSpanProcessor by the same rules as HTTP', async () => {
    exporter = new OtlpGrpcSpanExporter({ url: receiver.url });
    const dropped: string[] = [];
    const processor = new ReliableSpanProcessor(exporter, {
      batchSize: 2,
      maxConcurrentExports: 1,
      initialBackoffMs: 5,
      onDropped: (_, status) => dropped.push(status),
    });
    receiver.answerNext({ code: CODE.unavailable }, { code: CODE.permissionDenied });
    const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('t');
    for (let index = 0; index < 4; index += 1) tracer.startSpan(`s${index}`).end();

    await processor.forceFlush();

    expect(receiver.requests.map((request) => [request.code, request.itemCount])).toEqual([
      [CODE.unavailable, 0],
      [CODE.permissionDenied, 0],
      [0, 2],
    ]);
    expect(dropped).toEqual(['PERMISSION_DENIED']);
    expect(processor.stats()).toMatchObject({ exported: 2, dropped: 2, failedAttempts: 1 });
    await processor.shutdown(0);
  });

  it('calls an endpoint that is not there retryable', async () => {
    const url = receiver.url;
    await receiver.close();
    exporter = new OtlpGrpcSpanExporter({ url, timeoutMs: 2000 });

    expect(await sendOnce(exporter, spans(1))).toMatchObject({
      kind: 'retryable',
      status: 'UNAVAILABLE',
    });
    receiver = await startOtlpGrpcReceiver();
  });
});
