import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/errors/index.js';
import {
  createTraceExporter,
  resolveExportConfig,
  resolveMetricsExport,
  startMetricsExport,
} from '../../../src/sidecar/export/index.js';
import { detectResource } from '../../../src/sidecar/pipeline/detect-resource.js';
import {
  startOtlpGrpcReceiver,
  startOtlpReceiver,
  type OtlpGrpcReceiver,
  type OtlpReceiver,
} from '../../../src/testing/index.js';
import { startTlsTerminator, TLS_FILES, type TlsTerminator } from './tls-terminator.js';
import { sendOnce } from './send-once.js';

function spans(count: number): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(memory)],
  }).getTracer('tls-test');
  for (let index = 0; index < count; index += 1) tracer.startSpan(`span ${index}`).end();
  return memory.getFinishedSpans();
}

/** The variables a deployment with a private CA and mutual TLS sets. */
const MUTUAL_TLS = {
  OTEL_EXPORTER_OTLP_CERTIFICATE: TLS_FILES.ca,
  OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: TLS_FILES.clientCert,
  OTEL_EXPORTER_OTLP_CLIENT_KEY: TLS_FILES.clientKey,
};

const portOf = (url: string): number => Number(new URL(url).port);

/** The test CA in DER: the same certificate, in the form TLS silently ignores as `ca`. */
const DER_CA = join(mkdtempSync(join(tmpdir(), 'tooltrace-tls-')), 'ca.der');
writeFileSync(DER_CA, new X509Certificate(readFileSync(TLS_FILES.ca)).raw);

afterAll(() => rmSync(dirname(DER_CA), { recursive: true, force: true }));

describe('export over TLS, configured by the OpenTelemetry certificate variables', () => {
  const closing: { close(): Promise<void> }[] = [];
  const exporters: { shutdown(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const exporter of exporters.splice(0)) await exporter.shutdown();
    for (const part of closing.splice(0).reverse()) await part.close();
  });

  async function httpBehindTls(mutual: boolean): Promise<[OtlpReceiver, TlsTerminator]> {
    const receiver = await startOtlpReceiver();
    closing.push(receiver);
    const front = await startTlsTerminator(portOf(receiver.url), { mutual, alpn: ['http/1.1'] });
    closing.push(front);
    return [receiver, front];
  }

  async function exporterFor(endpoint: string, env: NodeJS.ProcessEnv, protocol = 'http/protobuf') {
    const exporter = await createTraceExporter(resolveExportConfig({ endpoint, protocol }, env));
    exporters.push(exporter);
    return exporter;
  }

  it('exports over https to an endpoint signed by a private CA, presenting the client certificate', async () => {
    const [receiver, front] = await httpBehindTls(true);
    const exporter = await exporterFor(front.url, MUTUAL_TLS);
    expect((await sendOnce(exporter, spans(3))).kind).toBe('success');
    expect(receiver.spans.map((span) => span.name)).toEqual(['span 0', 'span 1', 'span 2']);
    expect(front.clients).toEqual(['tooltrace sidecar']);
  });

  it('takes the traces-specific variable over the generic one', async () => {
    const [receiver, front] = await httpBehindTls(false);
    const exporter = await exporterFor(front.url, {
      OTEL_EXPORTER_OTLP_CERTIFICATE: TLS_FILES.clientCert,
      OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: TLS_FILES.ca,
    });
    expect((await sendOnce(exporter, spans(1))).kind).toBe('success');
    expect(receiver.spans).toHaveLength(1);
  });

  it('refuses an endpoint its CA did not sign, and a server refuses it without a client certificate', async () => {
    const [receiver, front] = await httpBehindTls(true);
    const untrusting = await exporterFor(front.url, {});
    const unverified = await sendOnce(untrusting, spans(1));
    expect(unverified).toMatchObject({ kind: 'retryable', status: 'network' });
    expect(unverified.kind === 'retryable' && unverified.reason).toMatch(/certificate/);

    const anonymous = await exporterFor(front.url, {
      OTEL_EXPORTER_OTLP_CERTIFICATE: TLS_FILES.ca,
    });
    expect((await sendOnce(anonymous, spans(1))).kind).toBe('retryable');
    expect(receiver.spans).toEqual([]);
  });

  it('exports over gRPC with TLS and a client certificate', async () => {
    const receiver: OtlpGrpcReceiver = await startOtlpGrpcReceiver();
    closing.push(receiver);
    const front = await startTlsTerminator(portOf(receiver.url), { mutual: true, alpn: ['h2'] });
    closing.push(front);
    const exporter = await exporterFor(front.url, MUTUAL_TLS, 'grpc');
    expect((await sendOnce(exporter, spans(2))).kind).toBe('success');
    expect(receiver.spans.map((span) => span.name)).toEqual(['span 0', 'span 1']);
    expect(front.clients).toEqual(['tooltrace sidecar']);
  });

  it('exports metrics over https with the metrics variables, checked like the traces ones', async () => {
    const [receiver, front] = await httpBehindTls(true);
    const env = {
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${front.url}/v1/metrics`,
      // The test receiver decodes metrics in OTLP/JSON.
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE: TLS_FILES.ca,
      OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE: TLS_FILES.clientCert,
      OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY: TLS_FILES.clientKey,
    };
    const config = resolveMetricsExport(env, 'http://unused:4318/v1/traces', 'http/protobuf')!;
    const metrics = await startMetricsExport({
      config,
      headers: {},
      resource: await detectResource({ 'service.name': 'tls-test' }),
      observe: (provider) => provider.getMeter('tls-test').createCounter('tls.test.count').add(3),
      log: () => {},
    });
    await metrics.shutdown(5000);
    expect(metrics.failure).toBeUndefined();
    expect(receiver.metrics.filter((point) => point.name === 'tls.test.count')).toEqual([
      expect.objectContaining({ value: 3 }),
    ]);
    expect(front.clients).toEqual(['tooltrace sidecar']);

    expect(() =>
      resolveMetricsExport(
        { ...env, OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY: TLS_FILES.serverKey },
        'http://unused:4318/v1/traces',
        'http/protobuf',
      ),
    ).toThrow(`OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY: ${TLS_FILES.serverKey} is not the key`);
  });

  describe('refuses at start-up, naming the variable', () => {
    const configFor = (env: NodeJS.ProcessEnv) => () =>
      resolveExportConfig({ endpoint: 'https://collector:4318' }, env);

    it.each([
      [
        'a file that does not exist',
        { OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ca.pem' },
        'OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read /nonexistent/ca.pem (ENOENT)',
      ],
      [
        'a key given as the CA',
        { OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: TLS_FILES.clientKey },
        `OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: ${TLS_FILES.clientKey} is not a PEM certificate`,
      ],
      [
        'a client key without its certificate',
        { OTEL_EXPORTER_OTLP_CLIENT_KEY: TLS_FILES.clientKey },
        'OTEL_EXPORTER_OTLP_CLIENT_KEY is set but neither OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE nor OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is',
      ],
      [
        'a traces client certificate without its key',
        { OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE: TLS_FILES.clientCert },
        'OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE is set but neither OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY nor OTEL_EXPORTER_OTLP_CLIENT_KEY is',
      ],
      [
        'a certificate in DER, which TLS would ignore',
        { OTEL_EXPORTER_OTLP_CERTIFICATE: DER_CA },
        `OTEL_EXPORTER_OTLP_CERTIFICATE: ${DER_CA} is not a PEM certificate`,
      ],
      [
        'a certificate as the client key',
        { ...MUTUAL_TLS, OTEL_EXPORTER_OTLP_CLIENT_KEY: TLS_FILES.clientCert },
        `OTEL_EXPORTER_OTLP_CLIENT_KEY: ${TLS_FILES.clientCert} is not an unencrypted PEM private key`,
      ],
      [
        "another certificate's key",
        { ...MUTUAL_TLS, OTEL_EXPORTER_OTLP_CLIENT_KEY: TLS_FILES.serverKey },
        `OTEL_EXPORTER_OTLP_CLIENT_KEY: ${TLS_FILES.serverKey} is not the key of the certificate in ${TLS_FILES.clientCert}`,
      ],
    ])('%s', (_what, env, message) => {
      expect(configFor(env)).toThrow(ConfigurationError);
      expect(configFor(env)).toThrow(message);
    });

    it('but reads none of them for an http:// endpoint, which does not use them', () => {
      const config = resolveExportConfig(
        { endpoint: 'http://collector:4318' },
        { OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ca.pem' },
      );
      expect(config.tls).toBeUndefined();
    });
  });
});
