import { OTLPTraceExporter as OtlpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ConfigurationError } from '../../errors/index.js';
import { parseHeaders } from './key-value-list.js';
import { OtlpHttpSpanExporter } from './otlp-http-span-exporter.js';

/** OTLP transports the sidecar speaks. gRPC is not among them: use the Collector's HTTP port. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Where and how spans are exported; flags set these, the standard variables fill the rest. */
export interface ExportConfig {
  /** Full traces URL, for example `http://otel-collector:4318/v1/traces`. */
  tracesUrl: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  compression: 'gzip' | 'none';
  timeoutMs: number;
}

/** Overrides from the command line; anything left out comes from the environment. */
export interface ExportOverrides {
  /** Base endpoint; `/v1/traces` is appended, as for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint?: string;
  protocol?: string;
  headers?: Record<string, string>;
  compression?: string;
  timeoutMs?: number;
}

const DEFAULT_ENDPOINT = 'http://localhost:4318';

/**
 * Resolves the export configuration once, with OpenTelemetry's precedence: flags, then the
 * traces-specific variable (`OTEL_EXPORTER_OTLP_TRACES_*`), then the generic one
 * (`OTEL_EXPORTER_OTLP_*`), then the spec's defaults. We resolve it ourselves rather than
 * through `@opentelemetry/sdk-node` because the sidecar brings its own span processor, and
 * sdk-node skips the exporter variables when span processors are passed in.
 */
export function resolveExportConfig(
  overrides: ExportOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
): ExportConfig {
  const pick = (name: string): string | undefined => {
    const value = env[`OTEL_EXPORTER_OTLP_TRACES_${name}`] ?? env[`OTEL_EXPORTER_OTLP_${name}`];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  let tracesUrl: string;
  if (overrides.endpoint !== undefined) {
    tracesUrl = appendTracesPath(overrides.endpoint, '--otlp-endpoint');
  } else if (nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined) {
    tracesUrl = checkUrl(
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT!.trim(),
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    );
  } else {
    tracesUrl = appendTracesPath(
      nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? DEFAULT_ENDPOINT,
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    );
  }

  const protocolText = overrides.protocol ?? pick('PROTOCOL') ?? 'http/protobuf';
  if (protocolText !== 'http/protobuf' && protocolText !== 'http/json') {
    throw new ConfigurationError(
      `OTLP protocol '${protocolText}' is not supported: use http/protobuf or http/json` +
        (protocolText === 'grpc' ? " (point the sidecar at the Collector's HTTP port 4318)" : ''),
      { setting: 'OTEL_EXPORTER_OTLP_PROTOCOL' },
    );
  }

  const compressionText = overrides.compression ?? pick('COMPRESSION') ?? 'none';
  if (compressionText !== 'gzip' && compressionText !== 'none') {
    throw new ConfigurationError(
      `OTLP compression '${compressionText}' is not supported: use gzip or none`,
      { setting: 'OTEL_EXPORTER_OTLP_COMPRESSION' },
    );
  }

  const timeoutText = pick('TIMEOUT');
  const timeoutMs =
    overrides.timeoutMs ?? (timeoutText === undefined ? 10_000 : Number(timeoutText));
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigurationError(`OTLP timeout must be a positive number of milliseconds`, {
      setting: 'OTEL_EXPORTER_OTLP_TIMEOUT',
    });
  }

  const headers = {
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    ...overrides.headers,
  };

  return { tracesUrl, protocol: protocolText, headers, compression: compressionText, timeoutMs };
}

/**
 * The exporter for `config`: tooltrace's own {@link OtlpHttpSpanExporter} for `http/protobuf`
 * (encoding is most of the sidecar's export work, and it does it in a third of the time), the
 * stock OTLP/HTTP JSON exporter for `http/json`.
 */
export function createTraceExporter(config: ExportConfig): SpanExporter {
  if (config.protocol === 'http/protobuf') {
    return new OtlpHttpSpanExporter({
      url: config.tracesUrl,
      headers: config.headers,
      compression: config.compression,
      timeoutMs: config.timeoutMs,
    });
  }
  return new OtlpJsonTraceExporter({
    url: config.tracesUrl,
    headers: config.headers,
    compression:
      config.compression === 'gzip' ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
    timeoutMillis: config.timeoutMs,
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function checkUrl(text: string, setting: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    throw new ConfigurationError(`${setting}: '${text}' is not a URL`, { setting, cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigurationError(`${setting}: '${text}' must be an http:// or https:// URL`, {
      setting,
    });
  }
  return url.toString();
}

function appendTracesPath(base: string, setting: string): string {
  const url = checkUrl(base, setting);
  return `${url.replace(/\/+$/, '')}/v1/traces`;
}
