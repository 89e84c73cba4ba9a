import type { MeterProvider as MeterProviderApi } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { OtlpMetricExporter } from './otlp-metric-exporter.js';
import { ConfigurationError } from '../../errors/index.js';
import { createOtlpExporter, MAX_DELAY_MS } from './export-config.js';
import { resolveExporterSelection, type ExporterName } from './exporter-selection.js';
import { readExportTls, type ExportTls } from './export-tls.js';
import { readTemporalityPreference, type TemporalityPreference } from './metrics-temporality.js';
import { ConsoleMetricExporter } from './console-metric-exporter.js';
import type { Escape } from './format-span.js';

/** Where and how the sidecar exports metrics, from {@link resolveMetricsExport}. */
export interface MetricsExportConfig {
  /** `otlp` (to {@link url}), `console` (standard output), or both. */
  readonly exporters: ReadonlySet<ExporterName>;
  readonly url: string;
  readonly protocol: 'http/protobuf' | 'http/json' | 'grpc';
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (`cumulative` when unset). */
  readonly temporality: TemporalityPreference;
  /** Certificates for an `https://` endpoint (`OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE`, …). */
  readonly tls?: ExportTls;
}

/** Options for {@link startMetricsExport}. */
export interface MetricsExportOptions {
  config: MetricsExportConfig;
  /** Export headers (`--otlp-header`, `OTEL_EXPORTER_OTLP_HEADERS`). */
  headers: Record<string, string>;
  resource: Resource;
  /** Registers instruments of the sidecar's own (its health) on the provider's meter. */
  observe: (provider: MeterProviderApi) => void;
  /** Where a failing export, and its recovery, is reported. */
  log: (line: string) => void;
  /** Where `console` writes, and what makes input safe there (the sidecar's `printable`). */
  console?: { stream: NodeJS.WritableStream; escape: Escape };
}

/** A running metrics export: the provider the subscriber records into. */
export interface MetricsExport {
  readonly meterProvider: MeterProviderApi;
  /** Where the metrics go, for the start-up line. */
  readonly url: string;
  readonly protocol: string;
  /** Whether they go over OTLP (to {@link url}); else to standard output only. */
  readonly otlp: boolean;
  /** Exports what was recorded since the last export, then stops; at most `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
  /**
   * Why the latest export did not deliver (the endpoint's error), or `undefined` when it did:
   * after {@link MetricsExport.shutdown}, whether the final metrics reached the endpoint.
   */
  readonly failure: string | undefined;
}

/** The OTLP specification's default metric export interval. */
const DEFAULT_INTERVAL_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Where the tool-call metrics and the sidecar's own health go over OTLP (and, with `console`,
 * to standard output), beside the traces, or `undefined` with no metric exporter
 * (`OTEL_METRICS_EXPORTER=none`; `exporters`, from {@link resolveExporterSelection}, says
 * which). The
 * endpoint is `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else the traces URL with `/v1/metrics` in
 * place of `/v1/traces`; the protocol `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, else the traces
 * one; the interval `OTEL_METRIC_EXPORT_INTERVAL` (ms, 60000) and timeout
 * `OTEL_METRIC_EXPORT_TIMEOUT` (ms, 30000). A bad value throws a {@link ConfigurationError}
 * naming the variable, before anything starts.
 */
export function resolveMetricsExport(
  env: NodeJS.ProcessEnv,
  tracesUrl: string,
  tracesProtocol: string,
  exporters: ReadonlySet<ExporterName> = resolveExporterSelection(env).metrics,
): MetricsExportConfig | undefined {
  if (exporters.size === 0) return undefined;
  const protocol = env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL?.trim().toLowerCase() || tracesProtocol;
  if (protocol !== 'http/protobuf' && protocol !== 'http/json' && protocol !== 'grpc') {
    throw new ConfigurationError(
      `OTLP metrics protocol '${protocol}' is not supported: use http/protobuf, http/json or grpc`,
      { setting: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL' },
    );
  }
  const intervalMs = milliseconds(env, 'OTEL_METRIC_EXPORT_INTERVAL', DEFAULT_INTERVAL_MS);
  const url = metricsUrl(env, tracesUrl, protocol === 'grpc' && tracesProtocol === 'grpc');
  const tls = new URL(url).protocol === 'https:' ? readExportTls(env, 'METRICS') : undefined;
  return {
    exporters,
    url,
    protocol,
    ...(tls === undefined ? {} : { tls }),
    temporality: readTemporalityPreference(env),
    intervalMs,
    timeoutMs: Math.min(
      intervalMs,
      milliseconds(env, 'OTEL_METRIC_EXPORT_TIMEOUT', DEFAULT_TIMEOUT_MS),
    ),
  };
}

/**
 * Starts the metrics export `config` describes: a MeterProvider read every interval. The metrics
 * SDK, the serializer and the exporter are loaded here, when metrics are on: they are a third of
 * the sidecar's start-up, which `OTEL_METRICS_EXPORTER=none` then does without. The gRPC
 * transport (and `@grpc/grpc-js`, a quarter of a second) is loaded only when asked for.
 */
export async function startMetricsExport(options: MetricsExportOptions): Promise<MetricsExport> {
  const { config } = options;
  const { MeterProvider, PeriodicExportingMetricReader } = commonJs(
    await import('@opentelemetry/sdk-metrics'),
  );
  const otlp = config.exporters.has('otlp');
  const reporting = otlp
    ? await otlpMetricExporter(config, options.headers, options.log)
    : undefined;
  const readers = [
    ...(reporting === undefined ? [] : [reporting]),
    ...(config.exporters.has('console')
      ? [
          new ConsoleMetricExporter(
            options.console?.stream ?? process.stdout,
            options.console?.escape ?? ((text) => JSON.stringify(text).slice(1, -1)),
          ),
        ]
      : []),
  ].map(
    (exporter) =>
      new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: config.intervalMs,
        exportTimeoutMillis: config.timeoutMs,
      }),
  );
  const provider = new MeterProvider({ resource: options.resource, readers });
  options.observe(provider);
  let stopped: Promise<void> | undefined;
  return {
    meterProvider: provider,
    url: otlp ? config.url : 'standard output (console)',
    protocol: otlp ? config.protocol : 'console',
    otlp,
    shutdown(shutdownTimeoutMs: number): Promise<void> {
      reporting?.closing();
      stopped ??= provider
        .shutdown({ timeoutMillis: Math.max(1, shutdownTimeoutMs) })
        .catch(() => undefined);
      return stopped;
    },
    get failure() {
      return reporting?.failure;
    },
  };
}

/**
 * An {@link OtlpMetricExporter} (the stock delegate and serializers) sending through the span
 * export's OTLP/HTTP or OTLP/gRPC exporter on the metrics path. The gRPC one, and
 * `@grpc/grpc-js` (a quarter of a second), are loaded only when asked for.
 */
async function otlpMetricExporter(
  config: MetricsExportConfig,
  headers: Record<string, string>,
  log: (line: string) => void,
): Promise<OtlpMetricExporter> {
  const { OtlpMetricExporter } = await import('./otlp-metric-exporter.js');
  const json = config.protocol === 'http/json';
  const sender = await createOtlpExporter(
    config.protocol,
    { url: config.url, headers, timeoutMs: config.timeoutMs, tls: config.tls },
    '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
  );
  return new OtlpMetricExporter(
    {
      // grpc-js sends a Buffer; the serializers give a Uint8Array.
      send: (body) => sender.send(Buffer.from(body.buffer, body.byteOffset, body.byteLength)),
      shutdown: () => sender.shutdown(),
    },
    json ? 'json' : 'protobuf',
    config,
    log,
  );
}

function metricsUrl(env: NodeJS.ProcessEnv, tracesUrl: string, sameGrpcServer: boolean): string {
  const explicit = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim();
  if (explicit !== undefined && explicit !== '') {
    try {
      return new URL(explicit).href;
    } catch {
      throw new ConfigurationError(
        `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is not a URL: '${explicit}'`,
        { setting: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT' },
      );
    }
  }
  // gRPC serves every signal at one address: the traces server's.
  if (sameGrpcServer) return tracesUrl;
  if (tracesUrl.endsWith('/v1/traces'))
    return `${tracesUrl.slice(0, -'/v1/traces'.length)}/v1/metrics`;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || 'http://localhost:4318';
  return `${base.replace(/\/+$/, '')}/v1/metrics`;
}

function milliseconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name]?.trim();
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!(value > 0 && value <= MAX_DELAY_MS)) {
    throw new ConfigurationError(
      `${name} must be a number of milliseconds from 1 to ${MAX_DELAY_MS}, got '${text}'`,
      {
        setting: name,
      },
    );
  }
  return value;
}

/**
 * The exports of a CommonJS package loaded with `import()`. Node gives them as named exports
 * (and the whole `module.exports` as `default`), and so does tsx; the bundled command, where
 * esbuild puts a lazily loaded CommonJS package in a chunk of its own, gives them only as
 * `default`. Reading `default` first works under all three.
 */
function commonJs<Namespace extends object>(namespace: Namespace): Namespace {
  const whole = (namespace as { default?: unknown }).default;
  return typeof whole === 'object' && whole !== null ? (whole as Namespace) : namespace;
}
