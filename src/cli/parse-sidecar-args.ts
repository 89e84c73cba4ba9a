import { ConfigurationError } from '../errors/index.js';
import type { SidecarOptions } from '../sidecar/index.js';
// Past the export room's barrel on purpose: the barrel loads the SDK, which `--help` must not.
import { parseHeaders } from '../sidecar/export/key-value-list.js';
import { isEventTypePattern } from '../otel/internal.js';
import { parseFlags, traceByFlag } from './parse-flags.js';

/** `tooltrace sidecar --help`. */
export const SIDECAR_USAGE = `Usage: tooltrace sidecar [sources] [options]

Receives tooltrace / Nexus journal events and exports them as OpenTelemetry spans: over OTLP
(default), to standard output (OTEL_TRACES_EXPORTER=console) or to a file (--out).

Sources (at least one; several at once are fine):
  --stdin                     read NDJSON from standard input; alone, end of input exports
                              everything (open calls included) and exits
  --file PATH                 follow PATH like tail -F (rotation, truncation); repeatable
  --checkpoint PATH           record how far --file was safely exported; resume from it
  --checkpoint-reset          ignore a stored (say, corrupt) checkpoint: read --file from
                              the start and overwrite it
  --listen HOST:PORT          serve POST /v1/events (NDJSON, gzip), /healthz, /readyz,
                              /metrics; repeatable

Where spans go (no collector needed for the first two):
  --out FILE                  write them as OTLP JSON lines, one export request a line (the
                              Collector's file exporter format; tooltrace view FILE draws it),
                              each batch at once, even while the collector is down; instead of
                              OTLP unless an endpoint is set (--otlp-endpoint or
                              $OTEL_EXPORTER_OTLP_ENDPOINT) or OTEL_TRACES_EXPORTER names otlp
                              (default: $TOOLTRACE_OUT); started afresh, appended to with
                              --checkpoint
  --out-max-bytes N           rotate FILE at this size: FILE to FILE.1, ... (104857600; 0 never);
                              soft by one request: a request is never split (needs --out)
  --out-backups N             rotated files kept, the oldest deleted at the limit (3)
  OTEL_TRACES_EXPORTER=console  print each span readably on standard output
  --otlp-endpoint URL         OTLP/HTTP base URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT,
                              else http://localhost:4318); for grpc the server address
                              (default http://localhost:4317)

Options:
  --token TOKEN               bearer token for --listen, SECRET or NAME=SECRET; repeatable,
                              each client its own namespace (default: $TOOLTRACE_TOKEN);
                              required when listening on anything but loopback
  --token-file PATH           NAME=SECRET a line; read again on SIGHUP
  --otlp-protocol P           http/protobuf (default), http/json or grpc
  --otlp-header K=V           extra export header; repeatable
  --otlp-compression C        gzip or none
  --max-retry-after DURATION  longest Retry-After obeyed before retrying anyway (60s)
  --service-name NAME         service.name (default: $OTEL_SERVICE_NAME, else tooltrace-sidecar)
  --capture-content           record arguments, payloads and outputs (truncated, redacted)
  --max-queue-spans N         spans waiting for export before intake pushes back (50000)
  --max-line-bytes N          longest accepted line (1048576)
  --max-body-bytes N          largest POST /v1/events body, before and after gzip (16777216)
  --max-connections N         open HTTP connections; the oldest idle one makes room (256)
  --header-timeout DURATION   time a connection has to send request headers (10s)
  --body-timeout DURATION     time a POST has to send its body, then 408 (30s)
  --max-inflight-bytes N      request body bytes held at once; beyond, 429 (67108864)
  --idle-timeout DURATION     end a call with no result after this long idle (5m)
  --live-interval DURATION    at most one in-flight snapshot span per running call this
                              often (1s); the first once a call has run this long
  --no-live-updates           export no in-flight snapshots, only finished calls
  --exclude-events LIST       event types to leave out, comma-separated, prefixes with *
                              (llm.stream.*,plan.*); repeatable
  --trace-by MODE             causal-root (a trace per turn, default), session (one trace
                              per session under a root span) or call
  --agent-name NAME           gen_ai.agent.name of every span (default: the event's agent id)
  --shutdown-timeout DURATION how long SIGTERM/SIGINT or the end of --stdin may take to
                              flush (10s)
  --status-interval DURATION  status line period on stderr, 0 for none (10s)
  -h, --help                  show this help

Exporter variables:
  OTEL_TRACES_EXPORTER        otlp (default; with --out alone, the file only), console, none,
                              or a list: otlp,console; anything else is refused (exit 2)
  OTEL_METRICS_EXPORTER       otlp, console, none or a list (default: otlp when spans go over
                              OTLP, else none)
  OTEL_SDK_DISABLED=true      export nothing (said at start); events are still read and counted

Standard variables: OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_COMPRESSION,
OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE,
OTEL_EXPORTER_OTLP_CLIENT_KEY, OTEL_METRIC_EXPORT_INTERVAL, OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES. The sidecar exports no log records: OTEL_LOGS_EXPORTER has no effect.

Exit codes: 0 everything delivered; 2 bad flag or setting; 3 spans refused for good: by the
endpoint (status not retried, or partial_success), or standard output was closed (console);
4 spans not delivered by the shutdown timeout.
`;

/** One part of a duration: a number and its unit (`1h30m` has two). */
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/y;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * A duration flag: `500`, `500ms`, `10s`, `2m`, `1h` or a sum such as `1m30s`; a bare number is
 * milliseconds.
 */
function duration(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (trimmed === '') {
    throw new ConfigurationError(`--${flag} must be a duration such as 500ms or 10s, got ''`, {
      setting: `--${flag}`,
    });
  }
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed));
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < trimmed.length) {
    const match = DURATION_PART.exec(trimmed);
    if (match === null) {
      throw new ConfigurationError(
        `--${flag} must be a duration such as 500ms, 10s, 2m, 1h or 1m30s, got '${text}'`,
        { setting: `--${flag}` },
      );
    }
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  return Math.round(total);
}

/** The result of parsing `tooltrace sidecar` arguments. */
export type SidecarArgs = { help: true } | { help: false; options: SidecarOptions };

/**
 * Parses `tooltrace sidecar` arguments into {@link SidecarOptions}. Unknown flags and bad values
 * throw a {@link ConfigurationError} naming the flag.
 */
export function parseSidecarArgs(argv: readonly string[]): SidecarArgs {
  const { values } = parseFlags('sidecar', SIDECAR_USAGE, {
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      stdin: { type: 'boolean' },
      file: { type: 'string', multiple: true },
      checkpoint: { type: 'string' },
      'checkpoint-reset': { type: 'boolean' },
      listen: { type: 'string', multiple: true },
      token: { type: 'string', multiple: true },
      'token-file': { type: 'string' },
      out: { type: 'string' },
      'out-max-bytes': { type: 'string' },
      'out-backups': { type: 'string' },
      'otlp-endpoint': { type: 'string' },
      'otlp-protocol': { type: 'string' },
      'otlp-header': { type: 'string', multiple: true },
      'otlp-compression': { type: 'string' },
      'max-retry-after': { type: 'string' },
      'service-name': { type: 'string' },
      'capture-content': { type: 'boolean' },
      'max-queue-spans': { type: 'string' },
      'max-line-bytes': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-connections': { type: 'string' },
      'header-timeout': { type: 'string' },
      'body-timeout': { type: 'string' },
      'max-inflight-bytes': { type: 'string' },
      'idle-timeout': { type: 'string' },
      'live-interval': { type: 'string' },
      'no-live-updates': { type: 'boolean' },
      'exclude-events': { type: 'string', multiple: true },
      'trace-by': { type: 'string' },
      'agent-name': { type: 'string' },
      'shutdown-timeout': { type: 'string' },
      'status-interval': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return { help: true };

  const options: SidecarOptions = {};
  if (values.stdin === true) options.stdin = true;
  if (values.file !== undefined) options.files = values.file;
  if (values.checkpoint !== undefined) options.checkpoint = values.checkpoint;
  if (values['checkpoint-reset'] === true) options.checkpointReset = true;
  if (values.listen !== undefined) options.listen = values.listen;
  if (values.token !== undefined) options.tokens = values.token;
  if (values['token-file'] !== undefined) options.tokenFile = values['token-file'];
  if (values.out !== undefined) options.out = values.out;
  if (values['otlp-endpoint'] !== undefined) options.otlpEndpoint = values['otlp-endpoint'];
  if (values['otlp-protocol'] !== undefined) options.otlpProtocol = values['otlp-protocol'];
  if (values['otlp-compression'] !== undefined) {
    options.otlpCompression = values['otlp-compression'];
  }
  if (values['otlp-header'] !== undefined) {
    options.otlpHeaders = parseHeaders(values['otlp-header'].join(','), '--otlp-header');
  }
  if (values['service-name'] !== undefined) options.serviceName = values['service-name'];
  if (values['capture-content'] === true) options.captureContent = true;
  const integer = (flag: string, text: string | undefined, minimum: number): number | undefined => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < minimum) {
      throw new ConfigurationError(`--${flag} must be an integer >= ${minimum}, got '${text}'`, {
        setting: `--${flag}`,
      });
    }
    return value;
  };
  const assign = <K extends keyof SidecarOptions>(key: K, value: SidecarOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  assign('outMaxBytes', integer('out-max-bytes', values['out-max-bytes'], 0));
  assign('outBackups', integer('out-backups', values['out-backups'], 0));
  assign('maxQueueSpans', integer('max-queue-spans', values['max-queue-spans'], 1));
  assign('maxLineBytes', integer('max-line-bytes', values['max-line-bytes'], 64));
  assign('maxBodyBytes', integer('max-body-bytes', values['max-body-bytes'], 64));
  assign('maxConnections', integer('max-connections', values['max-connections'], 1));
  assign('headersTimeoutMs', duration('header-timeout', values['header-timeout']));
  assign('bodyTimeoutMs', duration('body-timeout', values['body-timeout']));
  assign('maxInflightBytes', integer('max-inflight-bytes', values['max-inflight-bytes'], 64));
  assign('idleTimeoutMs', duration('idle-timeout', values['idle-timeout']));
  assign('liveIntervalMs', duration('live-interval', values['live-interval']));
  if (values['no-live-updates'] === true) options.liveUpdates = false;
  if (values['exclude-events'] !== undefined) {
    const patterns = values['exclude-events']
      .flatMap((list) => list.split(','))
      .map((pattern) => pattern.trim())
      .filter((pattern) => pattern !== '');
    for (const pattern of patterns) {
      if (!isEventTypePattern(pattern)) {
        throw new ConfigurationError(
          `--exclude-events takes event types or prefixes ending in *, got '${pattern}'`,
          { setting: '--exclude-events' },
        );
      }
    }
    options.excludeEvents = patterns;
  }
  assign('traceBy', traceByFlag(values['trace-by']));
  if (values['agent-name'] !== undefined) options.agentName = values['agent-name'];
  assign('shutdownTimeoutMs', duration('shutdown-timeout', values['shutdown-timeout']));
  assign('maxRetryAfterMs', duration('max-retry-after', values['max-retry-after']));
  assign('statusIntervalMs', duration('status-interval', values['status-interval']));
  return { help: false, options };
}
