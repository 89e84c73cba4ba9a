import { ConfigurationError } from '../errors/index.js';
import {
  MAX_DELAY_MS,
  parseKeyValueList,
  resolveExportConfig,
  resolveExporterSelection,
  type ExportConfig,
  type ExporterSelection,
} from './export/index.js';
import {
  isLoopbackHost,
  parseClientToken,
  parseListenAddress,
  type ClientToken,
  type IntakeSettings,
} from './intake/index.js';
import type { SidecarTracingChoices } from './pipeline/index.js';
import type { SidecarOptions } from './sidecar-options.js';

/** {@link SidecarOptions} with every default applied and every setting checked, once. */
export interface SidecarSettings {
  /** Where events come from (stdin, files, HTTP) and the limits of each. */
  intake: IntakeSettings;
  /** The `traceReplay` options the flags set; `undefined` leaves its default. */
  tracing: SidecarTracingChoices;
  checkpoint: string | undefined;
  exportConfig: ExportConfig;
  /** Which exporters run (`OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER`, `--out`). */
  exporters: ExporterSelection;
  /** The `--out` file's rotation: size, and rotated files kept. */
  out: { maxBytes: number; backups: number };
  serviceName: string;
  resourceAttributes: Record<string, string>;
  shutdownTimeoutMs: number;
  maxQueueSpans: number;
  maxLineBytes: number;
  statusIntervalMs: number;
}

const DEFAULT_SERVICE_NAME = 'tooltrace-sidecar';

/**
 * Resolves and checks the sidecar's settings before anything starts: at least one source, a
 * checkpoint only with exactly one file, a token for every listen address other than loopback,
 * and the OTLP export configuration from flags over the standard variables. Throws a
 * {@link ConfigurationError} naming the setting.
 */
export function resolveSidecarSettings(options: SidecarOptions): SidecarSettings {
  const env = options.env ?? process.env;
  const files = options.files ?? [];
  const listen = (options.listen ?? []).map(parseListenAddress);
  const stdin = options.stdin === true;
  if (!stdin && files.length === 0 && listen.length === 0) {
    throw new ConfigurationError(
      'give at least one source: --stdin, --file PATH or --listen HOST:PORT',
      { setting: 'sources' },
    );
  }
  if (options.checkpoint !== undefined && files.length !== 1) {
    throw new ConfigurationError(
      '--checkpoint needs exactly one --file to record the position of',
      {
        setting: '--checkpoint',
      },
    );
  }
  if (options.checkpointReset === true && options.checkpoint === undefined) {
    throw new ConfigurationError('--checkpoint-reset needs --checkpoint', {
      setting: '--checkpoint-reset',
    });
  }
  // [flag, value, least]: every duration named by its flag, from its least to what timers take.
  for (const [setting, value, least] of [
    ['--header-timeout', options.headersTimeoutMs, 100],
    ['--body-timeout', options.bodyTimeoutMs, 100],
    ['--idle-timeout', options.idleTimeoutMs, 1],
    ['--live-interval', options.liveIntervalMs, 10],
    ['--max-retry-after', options.maxRetryAfterMs, 0],
    ['--shutdown-timeout', options.shutdownTimeoutMs, 0],
    ['--status-interval', options.statusIntervalMs, 0],
    ['checkpointIntervalMs', options.checkpointIntervalMs, 1],
  ] as const) {
    if (value !== undefined && !(value >= least && value <= MAX_DELAY_MS)) {
      throw new ConfigurationError(
        `${setting} must be from ${least}ms to ${MAX_DELAY_MS}ms (about 24 days), got ${value}ms`,
        { setting },
      );
    }
  }
  const tokens = tokensOf(options, env);
  const tokenFile = nonEmpty(options.tokenFile);
  for (const address of listen) {
    if (tokens.length === 0 && tokenFile === undefined && !isLoopbackHost(address.host)) {
      throw new ConfigurationError(
        `--listen ${address.host}:${address.port} is reachable from other machines: set a bearer token with --token, --token-file or TOOLTRACE_TOKEN`,
        { setting: '--token' },
      );
    }
  }
  const exportConfig = resolveExportConfig(
    {
      endpoint: options.otlpEndpoint,
      protocol: options.otlpProtocol,
      headers: options.otlpHeaders,
      compression: options.otlpCompression,
      maxRetryAfterMs: options.maxRetryAfterMs,
    },
    env,
  );
  const exporters = resolveExporterSelection(env, {
    out: options.out,
    otlpEndpointFlag: options.otlpEndpoint !== undefined,
  });
  for (const [setting, value] of [
    ['--out-max-bytes', options.outMaxBytes],
    ['--out-backups', options.outBackups],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      throw new ConfigurationError(`${setting} must be a whole number >= 0, got ${value}`, {
        setting,
      });
    }
    if (value !== undefined && nonEmpty(options.out ?? env.TOOLTRACE_OUT) === undefined) {
      throw new ConfigurationError(
        `${setting} needs --out FILE (or TOOLTRACE_OUT): there is no file to rotate`,
        { setting },
      );
    }
  }
  const resourceAttributes = parseKeyValueList(
    env.OTEL_RESOURCE_ATTRIBUTES,
    'OTEL_RESOURCE_ATTRIBUTES',
  );
  const serviceName =
    nonEmpty(options.serviceName) ??
    nonEmpty(env.OTEL_SERVICE_NAME) ??
    resourceAttributes['service.name'] ??
    DEFAULT_SERVICE_NAME;
  return {
    // The options as given (the HTTP limits, the tracing choices), with what is parsed here.
    intake: {
      ...options,
      stdin,
      files,
      checkpointReset: options.checkpointReset === true,
      checkpointIntervalMs: options.checkpointIntervalMs ?? 1000,
      listen,
      tokens,
      tokenFile,
    },
    tracing: options,
    checkpoint: options.checkpoint,
    exportConfig,
    exporters,
    out: { maxBytes: options.outMaxBytes ?? 100 * 1024 * 1024, backups: options.outBackups ?? 3 },
    serviceName,
    resourceAttributes: { ...resourceAttributes, 'service.name': serviceName },
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 10_000,
    maxQueueSpans: options.maxQueueSpans ?? 50_000,
    maxLineBytes: options.maxLineBytes ?? 1024 * 1024,
    statusIntervalMs: options.statusIntervalMs ?? 10_000,
  };
}

/** `--token` values (`tokens`), else `TOOLTRACE_TOKEN`, parsed as `SECRET` or `NAME=SECRET`. */
function tokensOf(options: SidecarOptions, env: NodeJS.ProcessEnv): ClientToken[] {
  const listed = options.tokens ?? [];
  // `--token ''` (an unset shell variable, say) must not quietly mean "no token at all".
  if (listed.some((text) => nonEmpty(text) === undefined)) {
    throw new ConfigurationError('--token needs a secret, got an empty one', {
      setting: '--token',
    });
  }
  const given = listed.map((text) => text.trim());
  if (given.length > 0) return given.map((text) => parseClientToken(text, '--token'));
  const fromEnv = nonEmpty(env.TOOLTRACE_TOKEN);
  return fromEnv === undefined ? [] : [parseClientToken(fromEnv, 'TOOLTRACE_TOKEN')];
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
