import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  ReceiverWaitError,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../src/testing/index.js';
import { otlpProtoTypes } from '../otlp/otlp-proto-schema.js';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtobufMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';

type ExporterConfig = NonNullable<ConstructorParameters<typeof JsonTraceExporter>[0]>;

interface ExportSetup {
  encoding: 'json' | 'protobuf';
  gzip: boolean;
}

/** Runs `build` against a real SDK pipeline (BatchSpanProcessor + OTLP exporter) into `url`. */
async function exportSpans(
  url: string,
  setup: ExportSetup,
  build: (tracer: Tracer) => void,
): Promise<void> {
  const config: ExporterConfig = {
    url,
    headers: { 'x-tenant': 'tenant-1' },
    ...(setup.gzip ? { compression: 'gzip' as ExporterConfig['compression'] } : {}),
  };
  const exporter =
    setup.encoding === 'json' ? new JsonTraceExporter(config) : new ProtobufTraceExporter(config);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': 'receiver-test',
      'service.version': '1.2.3',
    }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  build(provider.getTracer('tooltrace-test-scope', '0.0.7'));
  try {
    await provider.forceFlush();
  } finally {
    await provider.shutdown().catch(() => undefined);
  }
}

const START: [number, number] = [1_700_000_000, 123_456_789];
const START_NANO = 1_700_000_000_123_456_789n;

async function fetchStatus(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, init);
}

describe('startOtlpReceiver()', () => {
  let receiver: OtlpReceiver;

  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });

  afterEach(async () => {
    await receiver.close();
  });

  it('listens on 127.0.0.1 and a free port', () => {
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(receiver.tracesUrl).toBe(`${receiver.url}/v1/traces`);
    expect(receiver.logsUrl).toBe(`${receiver.url}/v1/logs`);
  });

  describe.each<ExportSetup>([
    { encoding: 'json', gzip: false },
    { encoding: 'json', gzip: true },
    { encoding: 'protobuf', gzip: false },
    { encoding: 'protobuf', gzip: true },
  ])('with the $encoding exporter (gzip: $gzip)', (setup) => {
    it('receives names, kinds, ids, parentage, exact times, attributes, events, links and status', async () => {
      let root!: Span;
      let child!: Span;
      let linked!: Span;
      await exportSpans(receiver.tracesUrl, setup, (tracer) => {
        linked = tracer.startSpan('linked', { kind: SpanKind.PRODUCER, startTime: START });
        linked.end([1_700_000_000, 200_000_000]);
        root = tracer.startSpan('root', {
          kind: SpanKind.SERVER,
          startTime: START,
          attributes: {
            'attr.string': 'text',
            'attr.int': 42,
            'attr.negative': -7,
            'attr.big': Number.MAX_SAFE_INTEGER,
            'attr.double': 3.25,
            'attr.true': true,
            'attr.false': false,
            'attr.strings': ['a', 'b'],
            'attr.ints': [1, 2, 3],
            'attr.doubles': [0.5, 1.5],
            'attr.booleans': [true, false],
            'attr.empty': '',
          },
          links: [{ context: linked.spanContext(), attributes: { 'link.reason': 'batch' } }],
        });
        child = tracer.startSpan(
          'child',
          { kind: SpanKind.CLIENT, startTime: [1_700_000_000, 500_000_001] },
          trace.setSpan(context.active(), root),
        );
        child.addEvent(
          'progress',
          { 'progress.value': 0.5, sequence: 1 },
          [1_700_000_000, 600_000_002],
        );
        child.addEvent('bare', [1_700_000_000, 700_000_003]);
        child.setStatus({ code: SpanStatusCode.ERROR, message: 'it failed' });
        child.end([1_700_000_000, 900_000_004]);
        root.setStatus({ code: SpanStatusCode.OK });
        root.end([1_700_000_001, 987_654_321]);
      });

      const spans = await receiver.waitForSpans(3);
      expect(spans.map((span) => span.name)).toEqual(['linked', 'child', 'root']);
      const byName = new Map(spans.map((span) => [span.name, span]));
      const rootSpan = byName.get('root')!;
      const childSpan = byName.get('child')!;
      const linkedSpan = byName.get('linked')!;

      expect(rootSpan).toMatchObject<Partial<ReceivedSpan>>({
        traceId: root.spanContext().traceId,
        spanId: root.spanContext().spanId,
        parentSpanId: '',
        kind: 2,
        startTimeUnixNano: START_NANO,
        endTimeUnixNano: 1_700_000_001_987_654_321n,
        status: { code: 1, message: '' },
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        events: [],
        scope: { name: 'tooltrace-test-scope', version: '0.0.7' },
        encoding: setup.encoding,
      });
      expect(rootSpan.attributes).toEqual({
        'attr.string': 'text',
        'attr.int': 42,
        'attr.negative': -7,
        'attr.big': Number.MAX_SAFE_INTEGER,
        'attr.double': 3.25,
        'attr.true': true,
        'attr.false': false,
        'attr.strings': ['a', 'b'],
        'attr.ints': [1, 2, 3],
        'attr.doubles': [0.5, 1.5],
        'attr.booleans': [true, false],
        'attr.empty': '',
      });
      expect(rootSpan.links).toEqual([
        {
          traceId: linked.spanContext().traceId,
          spanId: linked.spanContext().spanId,
          attributes: { 'link.reason': 'batch' },
        },
      ]);
      expect(rootSpan.resource).toMatchObject({
        'service.name': 'receiver-test',
        'service.version': '1.2.3',
      });

      expect(childSpan).toMatchObject<Partial<ReceivedSpan>>({
        traceId: root.spanContext().traceId,
        spanId: child.spanContext().spanId,
        parentSpanId: root.spanContext().spanId,
        kind: 3,
        startTimeUnixNano: 1_700_000_000_500_000_001n,
        endTimeUnixNano: 1_700_000_000_900_000_004n,
        status: { code: 2, message: 'it failed' },
      });
      expect(childSpan.events).toEqual([
        {
          name: 'progress',
          timeUnixNano: 1_700_000_000_600_000_002n,
          attributes: { 'progress.value': 0.5, sequence: 1 },
        },
        { name: 'bare', timeUnixNano: 1_700_000_000_700_000_003n, attributes: {} },
      ]);

      expect(linkedSpan).toMatchObject({ kind: 4, status: { code: 0, message: '' } });
      expect(linkedSpan.traceId).not.toBe(rootSpan.traceId);
      for (const span of spans) {
        expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
      }

      expect(receiver.requests).toHaveLength(1);
      expect(receiver.requests[0]).toMatchObject({
        method: 'POST',
        path: '/v1/traces',
        contentType: setup.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
        contentEncoding: setup.gzip ? 'gzip' : '',
        status: 200,
        itemCount: 3,
        error: '',
      });
      expect(receiver.requests[0]!.bytes).toBeGreaterThan(0);
      expect(receiver.requests[0]!.headers['x-tenant']).toBe('tenant-1');
    });

    it('counts the events and attributes the SDK dropped', async () => {
      await exportSpans(receiver.tracesUrl, setup, (tracer) => {
        const span = tracer.startSpan('busy', { startTime: START });
        for (let index = 0; index < 130; index += 1) {
          span.addEvent(`event ${index}`, [1_700_000_000, 200_000_000 + index]);
        }
        for (let index = 0; index < 130; index += 1) span.setAttribute(`key.${index}`, index);
        span.end([1_700_000_001, 0]);
      });
      const [span] = await receiver.waitForSpans(1);
      expect(span!.kind).toBe(1);
      expect(span!.events).toHaveLength(128);
      expect(span!.droppedEventsCount).toBe(2);
      expect(Object.keys(span!.attributes)).toHaveLength(128);
      expect(span!.droppedAttributesCount).toBe(2);
      expect(span!.events.at(-1)!.name).toBe('event 129');
    });
  });

  it('keeps spans from several requests in arrival order', async () => {
    const setup: ExportSetup = { encoding: 'protobuf', gzip: false };
    await exportSpans(receiver.tracesUrl, setup, (tracer) => tracer.startSpan('first').end());
    await exportSpans(receiver.tracesUrl, { encoding: 'json', gzip: false }, (tracer) =>
      tracer.startSpan('second').end(),
    );
    const spans = await receiver.waitForSpans(2);
    expect(spans.map((span) => [span.name, span.encoding])).toEqual([
      ['first', 'protobuf'],
      ['second', 'json'],
    ]);
    expect(receiver.requests.map((request) => request.status)).toEqual([200, 200]);
  });

  describe('answers per OTLP/HTTP', () => {
    it('answers an accepted protobuf request 200 with an empty partial_success, as the Collector does', async () => {
      const response = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf' },
        body: new Uint8Array(0),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/x-protobuf');
      expect([...new Uint8Array(await response.arrayBuffer())]).toEqual([0x0a, 0x00]);
    });

    it('answers an accepted JSON request 200 with an empty partialSuccess, as the Collector does', async () => {
      const response = await fetchStatus(receiver.logsUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
        body: '{"resourceLogs":[]}',
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toEqual({ partialSuccess: {} });
    });

    it('answers 404 for another path and 405 for another method', async () => {
      const notFound = await fetchStatus(`${receiver.url}/v1/profiles`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(notFound.status).toBe(404);
      await notFound.arrayBuffer();
      const notAllowed = await fetchStatus(receiver.tracesUrl, { method: 'GET' });
      expect(notAllowed.status).toBe(405);
      expect(notAllowed.headers.get('allow')).toBe('POST');
      await notAllowed.arrayBuffer();
      expect(receiver.requests.map((request) => [request.path, request.status])).toEqual([
        ['/v1/profiles', 404],
        ['/v1/traces', 405],
      ]);
    });

    it('answers 415 for another content type, 400 for a content encoding it cannot undo (as the Collector)', async () => {
      const text = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain' },
        body: 'hello',
      });
      expect(text.status).toBe(415);
      expect(await text.json()).toMatchObject({ code: 3, message: /unsupported content type/ });
      const brotli = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
        body: '{}',
      });
      expect(brotli.status).toBe(400);
      expect(await brotli.json()).toMatchObject({ message: /unsupported content encoding "br"/ });
    });

    it('answers 400 with a google.rpc.Status in the request encoding for an undecodable body', async () => {
      const json = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz"}]}]}]}',
      });
      expect(json.status).toBe(400);
      expect(await json.json()).toEqual({
        code: 3,
        message: expect.stringContaining(
          'resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hex characters',
        ) as unknown,
      });

      const protobuf = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf' },
        body: new Uint8Array([0x0a, 0xff, 0x01, 0x00]),
      });
      expect(protobuf.status).toBe(400);
      expect(protobuf.headers.get('content-type')).toBe('application/x-protobuf');
      const status = otlpProtoTypes().rpcStatus.decode(
        new Uint8Array(await protobuf.arrayBuffer()),
      ) as unknown as { code: number; message: string };
      expect(status.code).toBe(3);
      expect(status.message).toMatch(/malformed protobuf/);

      const badGzip = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        body: '{}',
      });
      expect(badGzip.status).toBe(400);
      await badGzip.arrayBuffer();
      expect(receiver.spans).toHaveLength(0);
      expect(receiver.requests.map((request) => request.status)).toEqual([400, 400, 400]);
    });

    it('answers 413 for a body over the limit, on the wire or once decompressed', async () => {
      const small = await startOtlpReceiver({ maxBodyBytes: 1024 });
      try {
        const large = JSON.stringify({ resourceSpans: [], padding: 'x'.repeat(4096) });
        const onTheWire = await fetchStatus(small.tracesUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: large,
        });
        expect(onTheWire.status).toBe(413);
        await onTheWire.arrayBuffer();
        const compressed = gzipSync(large);
        expect(compressed.byteLength).toBeLessThan(1024);
        const decompressed = await fetchStatus(small.tracesUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
          body: compressed,
        });
        expect(decompressed.status).toBe(413);
        await decompressed.arrayBuffer();
        expect(small.requests.map((request) => request.bytes)).toEqual([
          Buffer.byteLength(large),
          compressed.byteLength,
        ]);
      } finally {
        await small.close();
      }
    });

    it('answers 503 with Retry-After while unavailable, and accepts again afterwards', async () => {
      receiver.setAvailable(false);
      const refused = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('0');
      expect(await refused.json()).toMatchObject({ code: 14 });
      receiver.setAvailable(true);
      const accepted = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(accepted.status).toBe(200);
      await accepted.arrayBuffer();
    });
  });

  it('accepts deflate-compressed bodies', async () => {
    const response = await fetchStatus(receiver.tracesUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'deflate' },
      body: deflateSync(
        JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'deflated' }] }] }] }),
      ),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(receiver.spans.map((span) => span.name)).toEqual(['deflated']);
  });

  it('keeps serving after a client hangs up in the middle of a body', async () => {
    const { port } = new URL(receiver.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
            'Content-Length: 1000\r\n\r\n{"resourceSpans":',
          () => {
            socket.destroy();
            resolve();
          },
        );
      });
      socket.once('error', reject);
    });
    const response = await fetchStatus(receiver.tracesUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });

  describe('logs', () => {
    it('receives JSON and gzipped protobuf log requests on /v1/logs', async () => {
      const jsonResponse = await fetchStatus(receiver.logsUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          resourceLogs: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
              scopeLogs: [
                {
                  logRecords: [
                    { severityNumber: 9, body: { stringValue: 'first' } },
                    { severityNumber: 17, body: { stringValue: 'second' } },
                  ],
                },
              ],
            },
          ],
        }),
      });
      expect(jsonResponse.status).toBe(200);
      expect(await jsonResponse.json()).toEqual({ partialSuccess: {} });
      const logsType = otlpProtoTypes().exportLogsServiceRequest;
      const protobufBody = logsType
        .encode(
          logsType.fromObject({
            resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'zipped' } }] }] }],
          }),
        )
        .finish();
      const protobufResponse = await fetchStatus(receiver.logsUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' },
        body: gzipSync(protobufBody),
      });
      expect(protobufResponse.status).toBe(200);
      expect([...new Uint8Array(await protobufResponse.arrayBuffer())]).toEqual([0x0a, 0x00]);

      const records = await receiver.waitForLogs(3);
      expect(
        records.map((record) => [record.body, record.severityNumber, record.encoding]),
      ).toEqual([
        ['first', 9, 'json'],
        ['second', 17, 'json'],
        ['zipped', 0, 'protobuf'],
      ]);
      expect(records[0]!.resource).toEqual({ 'service.name': 'svc' });
      expect(receiver.spans).toEqual([]);
      expect(receiver.requests.map((request) => [request.path, request.itemCount])).toEqual([
        ['/v1/logs', 2],
        ['/v1/logs', 1],
      ]);
      await expect(receiver.waitForLogs(4, 20)).rejects.toThrow(
        /expected 4 log records .* within 20 ms, 3 arrived/,
      );
    });
  });

  describe('metrics', () => {
    /** Records a counter, an up-down counter gone negative, a histogram and a gauge; exports once. */
    async function exportMetrics(protocol: 'http/protobuf' | 'http/json'): Promise<void> {
      const url = `${receiver.url}/v1/metrics`;
      const exporter =
        protocol === 'http/protobuf'
          ? new ProtobufMetricExporter({ url })
          : new JsonMetricExporter({ url });
      const provider = new MeterProvider({
        resource: resourceFromAttributes({ 'service.name': 'metered' }),
        readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })],
      });
      const meter = provider.getMeter('tests', '1.2.3');
      meter.createCounter('calls', { unit: '{call}' }).add(3, { tool: 'search' });
      meter.createUpDownCounter('in_flight').add(-2, { tool: 'search' });
      const duration = meter.createHistogram('duration', { unit: 's' });
      duration.record(0.25, { tool: 'search' });
      duration.record(1.5, { tool: 'search' });
      meter.createGauge('progress').record(0.75);
      await provider.shutdown();
    }

    it('decodes protobuf metrics from the SDK exporter as it decodes JSON ones', async () => {
      await exportMetrics('http/protobuf');
      expect(receiver.requests.map((request) => [request.path, request.status])).toEqual([
        ['/v1/metrics', 200],
      ]);
      const fromProtobuf = receiver.metrics.map((point) => ({ ...point }));
      receiver.clear();
      await exportMetrics('http/json');
      const fromJson = receiver.metrics.map((point) => ({ ...point }));

      const byName = (points: typeof fromJson) =>
        [...points].sort((left, right) => (left.name < right.name ? -1 : 1));
      expect(byName(fromProtobuf)).toEqual(byName(fromJson));
      expect(
        byName(fromProtobuf).map((point) => [
          point.name,
          point.unit,
          point.type,
          point.attributes,
          point.count,
          point.value,
        ]),
      ).toEqual([
        ['calls', '{call}', 'sum', { tool: 'search' }, undefined, 3],
        ['duration', 's', 'histogram', { tool: 'search' }, 2, 1.75],
        ['in_flight', '', 'sum', { tool: 'search' }, undefined, -2],
        ['progress', '', 'gauge', {}, undefined, 0.75],
      ]);
      expect(fromProtobuf[0]!.resource['service.name']).toBe('metered');
      expect(fromProtobuf[0]!.scope).toEqual({ name: 'tests', version: '1.2.3' });
    });
  });

  describe('setAvailable(false)', () => {
    it('refuses every export attempt, as a collector that is down, and nothing is stored', async () => {
      receiver.setAvailable(false);
      await expect(
        exportSpans(receiver.tracesUrl, { encoding: 'json', gzip: false }, (tracer) =>
          tracer.startSpan('lost').end(),
        ),
      ).rejects.toBeTruthy(); // forceFlush reports the failed export
      expect(receiver.spans).toEqual([]);
      expect(receiver.requests.length).toBeGreaterThan(1);
      expect(new Set(receiver.requests.map((request) => request.status))).toEqual(new Set([503]));
      receiver.setAvailable(true);
      await exportSpans(receiver.tracesUrl, { encoding: 'json', gzip: false }, (tracer) =>
        tracer.startSpan('kept').end(),
      );
      expect((await receiver.waitForSpans(1)).map((span) => span.name)).toEqual(['kept']);
    });
  });

  describe('failNext', () => {
    it('answers the next N trace requests 503, which the exporter retries', async () => {
      const failing = await startOtlpReceiver({ failNext: 2 });
      try {
        await exportSpans(failing.tracesUrl, { encoding: 'protobuf', gzip: false }, (tracer) =>
          tracer.startSpan('retried').end(),
        );
        const [span] = await failing.waitForSpans(1);
        expect(span!.name).toBe('retried');
        expect(failing.requests.map((request) => request.status)).toEqual([503, 503, 200]);
      } finally {
        await failing.close();
      }
    });

    it('leaves log requests alone', async () => {
      receiver.failNext(1);
      const logs = await fetchStatus(receiver.logsUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(logs.status).toBe(200);
      await logs.arrayBuffer();
      const traces = await fetchStatus(receiver.tracesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(traces.status).toBe(503);
      await traces.arrayBuffer();
    });
  });

  describe('waitForSpans()', () => {
    it('rejects after the timeout with how many spans arrived', async () => {
      await exportSpans(receiver.tracesUrl, { encoding: 'json', gzip: false }, (tracer) =>
        tracer.startSpan('only one').end(),
      );
      const error = await receiver.waitForSpans(3, 50).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ReceiverWaitError);
      expect(error).toMatchObject({ reason: 'timeout', expected: 3, received: 1 });
      expect((error as Error).message).toMatch(
        /expected 3 spans at http:\/\/127\.0\.0\.1:\d+ within 50 ms, 1 arrived \(only one\); it answered 1 request\(s\): \/v1\/traces 200/,
      );
    });

    it('rejects pending waits when the receiver closes', async () => {
      const waiting = receiver.waitForSpans(1);
      await receiver.close();
      await expect(waiting).rejects.toMatchObject({ reason: 'closed', received: 0 });
    });

    it('resolves at once when enough spans are already there', async () => {
      await expect(receiver.waitForSpans(0)).resolves.toEqual([]);
    });
  });

  describe('waitForRequests()', () => {
    it('resolves once enough requests were answered, refused ones included', async () => {
      const waiting = receiver.waitForRequests(2);
      for (const path of ['/v1/traces', '/nowhere']) {
        const response = await fetchStatus(receiver.url + path, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{}',
        });
        await response.arrayBuffer();
      }
      expect((await waiting).map((request) => request.status)).toEqual([200, 404]);
    });
  });

  describe('clear()', () => {
    it('forgets spans, logs and requests', async () => {
      await exportSpans(receiver.tracesUrl, { encoding: 'json', gzip: false }, (tracer) =>
        tracer.startSpan('gone').end(),
      );
      await receiver.waitForSpans(1);
      receiver.clear();
      expect(receiver.spans).toEqual([]);
      expect(receiver.requests).toEqual([]);
      expect(receiver.logs).toEqual([]);
    });
  });

  describe('close()', () => {
    it('is safe to call twice and stops listening', async () => {
      const url = receiver.tracesUrl;
      await receiver.close();
      await receiver.close();
      await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
    });
  });
});
