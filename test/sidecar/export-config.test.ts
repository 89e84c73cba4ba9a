import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/errors/index.js';
import { resolveExportConfig } from '../../src/sidecar/export/index.js';
import { resolveSidecarSettings } from '../../src/sidecar/sidecar-settings.js';
import { runSidecar, type SidecarOptions } from '../../src/sidecar/index.js';
import { startOtlpGrpcReceiver } from '../../src/testing/index.js';
import { journalText } from './journal-lines.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

describe('sidecar export configuration', () => {
  const testbed = useReceiver();

  /** Runs `runSidecar` over two calls on a stream and waits until it exits. */
  async function exportTwoCalls(
    env: Record<string, string>,
    options: Partial<SidecarOptions> = {},
  ): Promise<void> {
    const sidecar = await runSidecar({
      stdin: true,
      input: Readable.from([journalText({ calls: 2 })]),
      env,
      log: () => {},
      statusIntervalMs: 0,
      shutdownTimeoutMs: 2000,
      ...options,
    });
    const timer = setTimeout(() => void sidecar.stop('test timeout', 0), 15_000);
    expect(await sidecar.done).toBe(0);
    clearTimeout(timer);
  }

  it('appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    await exportTwoCalls({ OTEL_EXPORTER_OTLP_ENDPOINT: `${testbed.receiver.url}/` });

    expect(testbed.receiver.spans).toHaveLength(2);
    // Metrics go beside the traces, flushed at the end.
    expect(new Set(testbed.receiver.requests.map((request) => request.path))).toEqual(
      new Set(['/v1/traces', '/v1/metrics']),
    );
  });

  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, over the generic one', async () => {
    await exportTwoCalls({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: testbed.receiver.tracesUrl,
    });
    expect(testbed.receiver.spans).toHaveLength(2);

    testbed.receiver.clear();
    const sidecar = await runSidecar({
      stdin: true,
      input: Readable.from([journalText({ calls: 2 })]),
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${testbed.receiver.url}/custom/traces` },
      log: () => {},
    });
    // The first sidecar's last metrics export may still arrive: look for the traces request.
    await expect
      .poll(() => testbed.receiver.requests.find((request) => request.path === '/custom/traces'))
      .toMatchObject({ status: 404 });
    await sidecar.stop('test over', 0);
  });

  it('sends OTEL_EXPORTER_OTLP_HEADERS, traces-specific ones and --otlp-header on top', async () => {
    await exportTwoCalls(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=generic,x-tenant=team%20one',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=traces',
      },
      { otlpHeaders: { 'x-extra': 'flag' } },
    );

    const headers = testbed.receiver.requests[0]!.headers;
    expect(headers['x-api-key']).toBe('traces');
    expect(headers['x-tenant']).toBe('team one');
    expect(headers['x-extra']).toBe('flag');
  });

  it('speaks http/protobuf by default and http/json when asked', async () => {
    await exportTwoCalls({ OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url });
    expect(testbed.receiver.spans.map((span) => span.encoding)).toEqual(['protobuf', 'protobuf']);

    testbed.receiver.clear();
    await exportTwoCalls({
      OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(testbed.receiver.spans.map((span) => span.encoding)).toEqual(['json', 'json']);

    testbed.receiver.clear();
    await exportTwoCalls(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
      { otlpProtocol: 'http/protobuf' },
    );
    expect(testbed.receiver.spans.map((span) => span.encoding)).toEqual(['protobuf', 'protobuf']);
  });

  it('compresses with gzip when OTEL_EXPORTER_OTLP_COMPRESSION says so', async () => {
    await exportTwoCalls({
      OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
    });

    expect(testbed.receiver.requests[0]!.contentEncoding).toBe('gzip');
    expect(testbed.receiver.spans).toHaveLength(2);
  });

  it('puts the service name on the resource: flag, OTEL_SERVICE_NAME, then the attributes', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes,deployment.environment=test',
    };
    await exportTwoCalls(env);
    expect(testbed.receiver.spans[0]!.resource['service.name']).toBe('from-attributes');
    expect(testbed.receiver.spans[0]!.resource['deployment.environment']).toBe('test');

    testbed.receiver.clear();
    await exportTwoCalls({ ...env, OTEL_SERVICE_NAME: 'checkout-agent' });
    expect(testbed.receiver.spans[0]!.resource['service.name']).toBe('checkout-agent');

    testbed.receiver.clear();
    await exportTwoCalls({ ...env, OTEL_SERVICE_NAME: 'checkout-agent' }, { serviceName: 'flag' });
    expect(testbed.receiver.spans[0]!.resource['service.name']).toBe('flag');
    expect(testbed.receiver.spans[0]!.resource['deployment.environment']).toBe('test');
  });

  it('names tooltrace-sidecar as the service when nothing else does', async () => {
    await exportTwoCalls({ OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url });

    expect(testbed.receiver.spans[0]!.resource['service.name']).toBe('tooltrace-sidecar');
    expect(testbed.receiver.spans[0]!.resource['telemetry.sdk.language']).toBe('nodejs');
  });

  it('refuses bad settings before starting, naming them', async () => {
    const refuse = (env: Record<string, string>, options: Partial<SidecarOptions> = {}) =>
      runSidecar({ stdin: true, input: Readable.from([]), env, log: () => {}, ...options });

    await expect(refuse({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml' })).rejects.toThrow(
      ConfigurationError,
    );
    await expect(refuse({ OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' })).rejects.toThrow(
      /gzip or none/,
    );
    await expect(refuse({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://x' })).rejects.toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
    await expect(refuse({ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).rejects.toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS/,
    );
    await expect(refuse({}, { stdin: false })).rejects.toThrow(/at least one source/);
    // Timeouts and intervals a timer cannot wait (it would fire after 1 ms), and non-numbers.
    await expect(refuse({ OTEL_EXPORTER_OTLP_TIMEOUT: 'abc' })).rejects.toThrow(
      "OTEL_EXPORTER_OTLP_TIMEOUT must be a number of milliseconds from 1 to 2147483647, got 'abc'",
    );
    await expect(refuse({ OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '9999999999' })).rejects.toThrow(
      "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT must be a number of milliseconds from 1 to 2147483647, got '9999999999'",
    );
    await expect(refuse({ OTEL_METRIC_EXPORT_INTERVAL: '9999999999' })).rejects.toThrow(
      "OTEL_METRIC_EXPORT_INTERVAL must be a number of milliseconds from 1 to 2147483647, got '9999999999'",
    );
  });

  it('suggests the scheme for an endpoint given as host:port', () => {
    for (const endpoint of ['127.0.0.1:4317', 'collector:4317']) {
      expect(() => resolveExportConfig({ endpoint, protocol: 'grpc' }, {})).toThrow(
        `(write http://${endpoint} or https://${endpoint})`,
      );
    }
  });

  it('takes the protocol in any case, as OTEL_METRICS_EXPORTER', () => {
    expect(resolveExportConfig({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' }).protocol).toBe(
      'http/json',
    );
  });

  it('bounds Retry-After by --max-retry-after, 60 s unless set', () => {
    expect(resolveSidecarSettings({ stdin: true, env: {} }).exportConfig.maxRetryAfterMs).toBe(
      60_000,
    );
    expect(
      resolveSidecarSettings({ stdin: true, env: {}, maxRetryAfterMs: 5000 }).exportConfig
        .maxRetryAfterMs,
    ).toBe(5000);
  });

  it('takes a gRPC endpoint as the server address, 4317 by default, with no path', () => {
    expect(resolveExportConfig({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatchObject({
      protocol: 'grpc',
      tracesUrl: 'http://localhost:4317/',
    });
    expect(
      resolveExportConfig(
        { protocol: 'grpc' },
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4317' },
      ).tracesUrl,
    ).toBe('https://collector:4317/');
  });

  it('exports over OTLP/gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc, metrics too', async () => {
    const grpc = await startOtlpGrpcReceiver();
    try {
      const sidecar = startSidecar(['--stdin'], {
        input: journalText({ calls: 3 }),
        env: {
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
          OTEL_EXPORTER_OTLP_ENDPOINT: grpc.url,
          OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=t1',
        },
      });

      expect(await sidecar.exited).toEqual({ code: 0, signal: null });
      expect(sidecar.stderr()).toContain(`exporting to ${grpc.url}/ (grpc)`);
      const calls = grpc.spans.map((span) => span.attributes['gen_ai.tool.call.id']).sort();
      expect(calls).toEqual(['tc_0', 'tc_1', 'tc_2']);
      expect(grpc.requests[0]!.metadata['x-tenant']).toBe('t1');
      expect(grpc.metricsRequests).toBeGreaterThan(0);
      expect(testbed.receiver.requests).toEqual([]);
    } finally {
      await grpc.close();
    }
  });

  it('lets flags win over the environment on the command line', async () => {
    const sidecar = startSidecar(
      [
        '--stdin',
        '--otlp-endpoint',
        testbed.receiver.url,
        '--otlp-protocol',
        'http/json',
        '--service-name',
        'cli',
      ],
      {
        input: journalText({ calls: 1 }),
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
          OTEL_SERVICE_NAME: 'env',
        },
      },
    );

    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(
      testbed.receiver.spans.map((span) => [span.encoding, span.resource['service.name']]),
    ).toEqual([['json', 'cli']]);
  });
});
