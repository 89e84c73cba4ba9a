import { ConfigurationError } from '../../errors/index.js';
import type { BatchTransport, OtlpEndpointOptions } from './export-outcome.js';
import { readExportTls, type ExportTls } from './export-tls.js';
import { parseHeaders } from './key-value-list.js';
import { OtlpHttpSpanExporter } from './otlp-http-span-exporter.js';

/** OTLP transports the sidecar speaks. */
export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json', 'grpc'];

/** Where and how spans are exported; flags set these, the standard variables fill the rest. */
export interface ExportConfig {
  /**
   * Full traces URL, for example `http://otel-collector:4318/v1/traces`; for `grpc` the
   * server's address, for example `http://otel-collector:4317`.
   */
  tracesUrl: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  compression: 'gzip' | 'none';
  timeoutMs: number;
  /** The longest `Retry-After` obeyed. @default 60000 */
  maxRetryAfterMs: number;
  /**
   * Certificates for an `https://` endpoint (`OTEL_EXPORTER_OTLP_CERTIFICATE`,
   * `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE`, `OTEL_EXPORTER_OTLP_CLIENT_KEY`); `undefined` keeps
   * Node's bundled roots and no client certificate.
   */
  tls?: ExportTls;
}

/** Overrides from the command line; anything left out comes from the environment. */
export interface ExportOverrides {
  /** Base endpoint; `/v1/traces` is appended, as for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint?: string;
  protocol?: string;
  headers?: Record<string, string>;
  compression?: string;
  timeoutMs?: number;
  maxRetryAfterMs?: number;
}

/**
 * The longest delay Node's timers take (2^31 - 1 ms, about 24.8 days): a longer one fires after
 * 1 ms instead, so a week-long timeout would time out at once and a year-long interval would run
 * a thousand times a second. Every duration setting is checked against it.
 */
export const MAX_DELAY_MS = 2_147_483_647;

const DEFAULT_HTTP_ENDPOINT = 'http://localhost:4318';
const DEFAULT_GRPC_ENDPOINT = 'http://localhost:4317';

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

  const protocolText = (overrides.protocol ?? pick('PROTOCOL') ?? 'http/protobuf').toLowerCase();
  if (!PROTOCOLS.includes(protocolText)) {
    throw new ConfigurationError(
      `OTLP protocol '${protocolText}' is not supported: use http/protobuf, http/json or grpc`,
      { setting: 'OTEL_EXPORTER_OTLP_PROTOCOL' },
    );
  }
  const protocol = protocolText as OtlpProtocol;
  // gRPC has no per-signal path: the endpoint is the server's address, as is.
  const grpc = protocol === 'grpc';
  const withPath = (base: string, setting: string): string =>
    grpc ? checkUrl(base, setting) : appendTracesPath(base, setting);

  let tracesUrl: string;
  if (overrides.endpoint !== undefined) {
    tracesUrl = withPath(overrides.endpoint, '--otlp-endpoint');
  } else if (nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined) {
    tracesUrl = checkUrl(
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT!.trim(),
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    );
  } else {
    tracesUrl = withPath(
      nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ??
        (grpc ? DEFAULT_GRPC_ENDPOINT : DEFAULT_HTTP_ENDPOINT),
      'OTEL_EXPORTER_OTLP_ENDPOINT',
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
  if (!(timeoutMs > 0 && timeoutMs <= MAX_DELAY_MS)) {
    const setting =
      env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?.trim() === timeoutText && timeoutText !== undefined
        ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'
        : 'OTEL_EXPORTER_OTLP_TIMEOUT';
    throw new ConfigurationError(
      `${setting} must be a number of milliseconds from 1 to ${MAX_DELAY_MS}, got '${timeoutText ?? timeoutMs}'`,
      { setting },
    );
  }

  const headers = {
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    ...overrides.headers,
  };

  const maxRetryAfterMs = overrides.maxRetryAfterMs ?? 60_000;
  // Only an https:// endpoint uses them: a variable left over for another endpoint stops nothing.
  const tls = new URL(tracesUrl).protocol === 'https:' ? readExportTls(env) : undefined;
  return {
    tracesUrl,
    protocol,
    headers,
    compression: compressionText,
    timeoutMs,
    maxRetryAfterMs,
    ...(tls === undefined ? {} : { tls }),
  };
}

/** The exporter for `config`'s traces (see {@link createOtlpExporter}). */
export function createTraceExporter(config: ExportConfig): Promise<BatchTransport> {
  return createOtlpExporter(config.protocol, { ...config, url: config.tracesUrl });
}

/**
 * The exporter of `protocol` to `endpoint`, one attempt per batch with the outcome classified as
 * OTLP says (the `ReliableSpanProcessor` retries): {@link OtlpHttpSpanExporter} for
 * `http/protobuf` (tooltrace's encoder: encoding is most of the sidecar's export work, and it
 * does it in a third of the time) and `http/json`; `OtlpGrpcSpanExporter` for `grpc`, loaded
 * only then, sending to `grpcMethod` (the trace service's by default).
 */
export async function createOtlpExporter(
  protocol: OtlpProtocol,
  endpoint: OtlpEndpointOptions,
  grpcMethod?: string,
): Promise<BatchTransport> {
  if (protocol === 'grpc') {
    const { OtlpGrpcSpanExporter } = await import('./otlp-grpc-span-exporter.js');
    return new OtlpGrpcSpanExporter({ ...endpoint, method: grpcMethod });
  }
  return new OtlpHttpSpanExporter({
    ...endpoint,
    encoding: protocol === 'http/json' ? 'json' : 'protobuf',
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function checkUrl(text: string, setting: string): string {
  // `collector:4317` is a scheme and a path to URL, and `127.0.0.1:4317` no URL at all.
  const hint = text.includes('://') ? '' : ` (write http://${text} or https://${text})`;
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    throw new ConfigurationError(`${setting}: '${text}' is not a URL${hint}`, {
      setting,
      cause: error,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigurationError(
      `${setting}: '${text}' must be an http:// or https:// URL${hint}`,
      { setting },
    );
  }
  return url.toString();
}

function appendTracesPath(base: string, setting: string): string {
  const url = checkUrl(base, setting);
  return `${url.replace(/\/+$/, '')}/v1/traces`;
}
