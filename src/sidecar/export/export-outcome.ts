import type { SpanBatch } from '../../otlp/index.js';
import type { ExportTls } from './export-tls.js';

/** Where an OTLP exporter sends, and how: what the OTLP/HTTP and OTLP/gRPC exporters share. */
export interface OtlpEndpointOptions {
  /**
   * The full signal URL over HTTP (`http://collector:4318/v1/traces`); the server over gRPC,
   * `http://host:4317` (plaintext) or `https://host:4317` (TLS).
   */
  url: string;
  /** Sent with every request: HTTP headers, gRPC metadata. */
  headers?: Record<string, string>;
  /** @default 'none' */
  compression?: 'gzip' | 'none';
  /** How long one request may take. @default 10000 */
  timeoutMs?: number;
  /** Certificates for an `https://` endpoint: a private CA, a client certificate and key. */
  tls?: ExportTls;
}

/**
 * What one export request came to, as OTLP defines it: accepted (perhaps with some spans
 * rejected, the `partial_success` of the answer), worth retrying (the endpoint is busy or
 * unreachable), or refused for good (retrying the same request cannot help).
 */
export type ExportOutcome =
  | {
      kind: 'success';
      /** Spans the endpoint accepted the request with but threw away (`partial_success`). */
      rejectedSpans: number;
      /** The endpoint's message about them, `''` when it gave none. */
      rejectionMessage: string;
    }
  | {
      kind: 'retryable';
      /** The status (`503`, `UNAVAILABLE`), or `network` when there was no answer. */
      status: string;
      /** Why, for the log: the status and the endpoint's message, or the network error. */
      reason: string;
      /** How long the endpoint asked to wait (`Retry-After`, gRPC `RetryInfo`), if it said. */
      retryAfterMs: number | undefined;
    }
  | {
      kind: 'permanent';
      /** The status the spans are counted under: `404`, `PERMISSION_DENIED`, `shutdown`. */
      status: string;
      /** The status, the endpoint's message and a hint, for the log. */
      reason: string;
    };

/**
 * What the {@link ReliableSpanProcessor} drives: a transport that opens batches for spans to be
 * encoded into as they end, then sends a batch's body, once per attempt, and again after a
 * retryable failure (the same bytes), never throwing: the one face of every span exporter here
 * (OTLP/HTTP, OTLP/gRPC, the `--out` file, the console), as opentelemetry-js's transports have
 * one `send` with a tagged result.
 */
export interface BatchTransport<Body = unknown> {
  /** A new, empty batch. */
  openBatch(): SpanBatch<Body>;
  /** Sends a closed batch's body once and tells what came of it; never rejects. */
  send(body: Body): Promise<ExportOutcome>;
  /** `body` will not be sent again: its memory may be reused once no attempt reads it. */
  releaseBatch(body: Body): void;
  /** Cuts requests in flight and refuses new ones. */
  shutdown(): Promise<void>;
}

/** The outcome of a send after the exporter was shut down. */
export const SHUT_DOWN: ExportOutcome = {
  kind: 'permanent',
  status: 'shutdown',
  reason: 'the exporter was shut down',
};

/** HTTP statuses OTLP/HTTP says to retry; every other failure status is permanent. */
const RETRYABLE_HTTP = new Set([429, 502, 503, 504]);

/** Whether the OTLP/HTTP specification allows retrying an answer with `status`. */
export function isRetryableHttpStatus(status: number): boolean {
  return RETRYABLE_HTTP.has(status);
}
