import type { Readable } from 'node:stream';
import type { HttpIntakeLimits } from './intake/index.js';
import type { SidecarTracingChoices } from './pipeline/index.js';

/**
 * Options for {@link runSidecar}; the `tooltrace sidecar` flags map onto these one to one. The
 * limits of `--listen` ({@link HttpIntakeLimits}) and the tracing choices
 * ({@link SidecarTracingChoices}) are stated where they are used, and taken in here.
 */
export interface SidecarOptions extends HttpIntakeLimits, SidecarTracingChoices {
  /** Read NDJSON envelopes from standard input. Alone, end of input exports all and exits. */
  stdin?: boolean;
  /** Journal files to follow like `tail -F`. */
  files?: string[];
  /** Where to record how far the (single) `--file` was safely read, to resume after a restart. */
  checkpoint?: string;
  /**
   * Ignore what the checkpoint says (a corrupt one stops start-up otherwise) and read the file
   * from the start, overwriting the checkpoint. @default false
   */
  checkpointReset?: boolean;
  /** `HOST:PORT` addresses serving `POST /v1/events`, `/healthz`, `/readyz`, `/metrics`. */
  listen?: string[];
  /**
   * Bearer tokens for `POST /v1/events`, each `SECRET` (client `default`) or `NAME=SECRET`; each
   * client is its own namespace (event ids, tool call ids, sessions) and its name is the span
   * attribute `tooltrace.client`. One is required when listening on anything but loopback.
   * @default [process.env.TOOLTRACE_TOKEN]
   */
  tokens?: string[];
  /** A file of `NAME=SECRET` lines, one token a line; read again on SIGHUP. */
  tokenFile?: string;
  /** OTLP base endpoint; overrides `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  otlpEndpoint?: string;
  /** `http/protobuf`, `http/json` or `grpc`; overrides `OTEL_EXPORTER_OTLP_PROTOCOL`. */
  otlpProtocol?: string;
  /**
   * Also write what is exported to this file, as OTLP JSON lines (one export request a line, as
   * the Collector's file exporter writes; `tooltrace view FILE` draws it). Without
   * `OTEL_TRACES_EXPORTER` (or `otlpEndpoint`) the file is the only exporter: the way to look
   * without a collector. The file is started afresh, or appended to with `checkpoint`.
   * @default process.env.TOOLTRACE_OUT
   */
  out?: string;
  /**
   * Size at which the `out` file is rotated (to `FILE.1`, …); `0` never rotates.
   * @default 104857600 (100 MiB)
   */
  outMaxBytes?: number;
  /**
   * Rotated `out` files kept; at the limit the oldest is deleted.
   * @default 3
   */
  outBackups?: number;
  /** Where `OTEL_TRACES_EXPORTER=console` (and the metrics' `console`) writes. @default process.stdout */
  stdout?: NodeJS.WritableStream;
  /** Extra export headers; merged over `OTEL_EXPORTER_OTLP_HEADERS`. */
  otlpHeaders?: Record<string, string>;
  /** `gzip` or `none`; overrides `OTEL_EXPORTER_OTLP_COMPRESSION`. */
  otlpCompression?: string;
  /**
   * The longest wait an endpoint's `Retry-After` (or gRPC `RetryInfo`) is obeyed for.
   * @default 60000
   */
  maxRetryAfterMs?: number;
  /** `service.name` of the exported resource; overrides `OTEL_SERVICE_NAME`. @default 'tooltrace-sidecar' */
  serviceName?: string;
  /**
   * How long shutdown (a signal, or the end of `stdin`) may take to flush what is left.
   * @default 10000
   */
  shutdownTimeoutMs?: number;
  /**
   * Memory budget: ended spans waiting for export before intake pushes back (HTTP 429, file
   * reading and stdin pause). About 2–4 KB each.
   * @default 50000
   */
  maxQueueSpans?: number;
  /**
   * Largest accepted line, in bytes; longer lines are rejected and counted.
   * @default 1048576
   */
  maxLineBytes?: number;
  /**
   * How often the checkpoint file is written.
   * @default 1000
   */
  checkpointIntervalMs?: number;
  /**
   * Print a status line this often while working (and one at the end); `0` turns it off.
   * @default 10000
   */
  statusIntervalMs?: number;
  /** The environment to read `OTEL_*` and `TOOLTRACE_*` variables from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Standard input to read with `stdin`. @default process.stdin */
  input?: Readable;
  /** Where log lines go. @default a line on standard error */
  log?: (line: string) => void;
}
