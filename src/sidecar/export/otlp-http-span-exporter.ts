import { Agent as HttpAgent, STATUS_CODES } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import {
  isRetryableHttpStatus,
  SHUT_DOWN,
  type BatchTransport,
  type ExportOutcome,
  type OtlpEndpointOptions,
} from './export-outcome.js';
import {
  decodePartialSuccess,
  decodeRpcStatus,
  OtlpJsonTraceEncoder,
  OtlpTraceEncoder,
  type SpanBatch,
} from '../../otlp/index.js';
import { parseRetryAfter } from '../../wire/index.js';
import { tooltraceNumberTypes } from './tooltrace-number-types.js';
import { postOtlp, type OtlpHttpAnswer } from './post-otlp.js';
import { USER_AGENT } from '../../user-agent.js';

const gzip = promisify(gzipCallback);

/** Options for {@link OtlpHttpSpanExporter}. */
export interface OtlpHttpSpanExporterOptions extends OtlpEndpointOptions {
  /**
   * `protobuf` (`application/x-protobuf`) or `json` (`application/json`).
   * @default 'protobuf'
   */
  encoding?: 'protobuf' | 'json';
}

/**
 * OTLP/HTTP span exporter for the sidecar. It makes exactly one attempt per batch and tells the
 * outcome as the OTLP/HTTP specification classifies it ({@link ExportOutcome}): 429, 502, 503,
 * 504 and network errors are retryable (with the endpoint's `Retry-After`, seconds or HTTP
 * date), every other status is permanent, with the decoded `google.rpc.Status` message and a
 * hint; a 2xx answer's `partial_success` is read. Retrying and backing off are the
 * {@link ReliableSpanProcessor}'s job. Protobuf is encoded by {@link OtlpTraceEncoder} (a quarter
 * of the stock serializer's cost), JSON by {@link OtlpJsonTraceEncoder}, with one number type per
 * attribute key in both. `shutdown()` destroys the
 * connections, so a process that must stop is not held by a request to an endpoint that hangs.
 */
export class OtlpHttpSpanExporter implements BatchTransport<Uint8Array> {
  readonly #url: URL;
  readonly #headers: Record<string, string>;
  readonly #json: boolean;
  readonly #compress: boolean;
  readonly #timeoutMs: number;
  readonly #agent: HttpAgent;
  readonly #encoder: OtlpTraceEncoder | OtlpJsonTraceEncoder;
  /** Bodies requests are writing: how many, and whether they were released meanwhile. */
  readonly #writing = new Map<Uint8Array, { requests: number; released: boolean }>();
  #shutdown = false;

  constructor(options: OtlpHttpSpanExporterOptions) {
    this.#url = new URL(options.url);
    this.#json = options.encoding === 'json';
    this.#encoder = this.#json
      ? new OtlpJsonTraceEncoder(tooltraceNumberTypes())
      : new OtlpTraceEncoder(tooltraceNumberTypes());
    this.#compress = options.compression === 'gzip';
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#headers = {
      ...options.headers,
      'User-Agent': USER_AGENT,
      'Content-Type': this.#json ? 'application/json' : 'application/x-protobuf',
      ...(this.#compress ? { 'Content-Encoding': 'gzip' } : {}),
    };
    const https = this.#url.protocol === 'https:';
    this.#agent = https
      ? new HttpsAgent({ keepAlive: true, maxSockets: 8, ...options.tls })
      : new HttpAgent({ keepAlive: true, maxSockets: 8 });
  }

  /** A batch that encodes each span as it is added, for {@link send}. */
  openBatch(): SpanBatch<Uint8Array> {
    return this.#encoder.openBatch();
  }

  /** Sends the body of a closed batch once and tells what came of it; never rejects. */
  send(body: Uint8Array): Promise<ExportOutcome> {
    return this.#shutdown ? Promise.resolve(SHUT_DOWN) : this.#send(body);
  }

  /**
   * Gives the memory of `body` back to the encoder: at once, or once the last request writing
   * it is done with it (an endpoint may answer before it read the whole request).
   */
  releaseBatch(body: Uint8Array): void {
    const writing = this.#writing.get(body);
    if (writing === undefined) this.#encoder.release(body);
    else writing.released = true;
  }

  /** Refuses new exports and closes every connection, cutting requests still in flight. */
  shutdown(): Promise<void> {
    this.#shutdown = true;
    this.#agent.destroy();
    return Promise.resolve();
  }

  async #send(plain: Uint8Array): Promise<ExportOutcome> {
    const where = this.#url.href;
    let answer: OtlpHttpAnswer;
    try {
      answer = await this.#post(this.#compress ? await gzip(plain) : plain);
    } catch (error) {
      return {
        kind: 'retryable',
        status: 'network',
        reason: `${where}: ${(error as Error).message}`,
        retryAfterMs: undefined,
      };
    }
    const { status, contentType } = answer;
    if (status >= 200 && status < 300) {
      const partial = decodePartialSuccess(answer.body, contentType);
      return {
        kind: 'success',
        rejectedSpans: partial?.rejectedSpans ?? 0,
        rejectionMessage: partial?.errorMessage ?? '',
      };
    }
    const rpc = decodeRpcStatus(answer.body, contentType);
    const said = rpc === undefined ? '' : `: ${rpc.message}`;
    const statusText = `${status} ${STATUS_CODES[status] ?? ''}`.trim();
    if (isRetryableHttpStatus(status)) {
      return {
        kind: 'retryable',
        status: String(status),
        reason: `${statusText} from ${where}${said}`,
        retryAfterMs: parseRetryAfter(answer.retryAfter),
      };
    }
    const hint = HINTS[status];
    return {
      kind: 'permanent',
      status: String(status),
      reason: `${statusText} from ${where}${hint === undefined ? '' : ` — ${hint}`}${said}`,
    };
  }

  /** POSTs `body`; resolves with the answer once its body was read (up to a limit). */
  #post(body: Uint8Array): Promise<OtlpHttpAnswer> {
    return postOtlp(this.#url, body, {
      agent: this.#agent,
      headers: this.#headers,
      timeoutMs: this.#timeoutMs,
      // Until the body is written out (or the request is gone), its memory is not the
      // encoder's again, even once it was released: an endpoint may answer before it read it.
      watch: (request) => {
        const writing = this.#writing.get(body) ?? { requests: 0, released: false };
        writing.requests += 1;
        this.#writing.set(body, writing);
        let written = false;
        const done = (): void => {
          if (written) return;
          written = true;
          writing.requests -= 1;
          if (writing.requests > 0) return;
          this.#writing.delete(body);
          if (writing.released) this.#encoder.release(body);
        };
        request.once('finish', done);
        request.once('close', done);
      },
    });
  }
}

/** What a permanent status most likely means, said where the failure is reported. */
const HINTS: Readonly<Record<number, string>> = {
  400: 'the endpoint refused the request as malformed',
  401: 'check the credentials (--otlp-header, OTEL_EXPORTER_OTLP_HEADERS)',
  403: 'check the credentials (--otlp-header, OTEL_EXPORTER_OTLP_HEADERS)',
  404: 'is the endpoint path right?',
  405: 'is the endpoint path right?',
  413: 'the endpoint takes smaller requests',
  415: 'does the endpoint speak this OTLP protocol (--otlp-protocol)?',
};
