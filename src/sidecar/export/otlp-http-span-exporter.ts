import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { VERSION } from '../../version.js';
import { ExportRequestError } from './export-request-error.js';
import { OtlpTraceEncoder } from './otlp-trace-encoder.js';

const gzip = promisify(gzipCallback);

/** Options for {@link OtlpHttpSpanExporter}. */
export interface OtlpHttpSpanExporterOptions {
  /** Full traces URL, for example `http://collector:4318/v1/traces`. */
  url: string;
  headers?: Record<string, string>;
  /** @default 'none' */
  compression?: 'gzip' | 'none';
  /**
   * How long one request may take.
   * @default 10000
   */
  timeoutMs?: number;
}

/**
 * OTLP/HTTP protobuf span exporter for the sidecar. Where the stock exporter serializes with a
 * two-pass writer and retries on its own, this one encodes with {@link OtlpTraceEncoder} (about a
 * third of the cost) and makes exactly one attempt per `export()`: retrying, backing off and
 * never dropping are the {@link ReliableSpanProcessor}'s job, which gets each failure as an
 * {@link ExportRequestError} with the HTTP status and `Retry-After`. `shutdown()` destroys the
 * connections, so a process that must stop is not held by a request to an endpoint that hangs.
 */
export class OtlpHttpSpanExporter implements SpanExporter {
  readonly #url: URL;
  readonly #headers: Record<string, string>;
  readonly #compress: boolean;
  readonly #timeoutMs: number;
  readonly #agent: HttpAgent;
  readonly #request: typeof httpRequest;
  readonly #encoder = new OtlpTraceEncoder();
  readonly #inFlight = new Set<Promise<unknown>>();
  #shutdown = false;

  constructor(options: OtlpHttpSpanExporterOptions) {
    this.#url = new URL(options.url);
    this.#compress = options.compression === 'gzip';
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#headers = {
      'User-Agent': `tooltrace-sidecar/${VERSION}`,
      ...options.headers,
      'Content-Type': 'application/x-protobuf',
      ...(this.#compress ? { 'Content-Encoding': 'gzip' } : {}),
    };
    const https = this.#url.protocol === 'https:';
    this.#agent = https
      ? new HttpsAgent({ keepAlive: true, maxSockets: 8 })
      : new HttpAgent({ keepAlive: true, maxSockets: 8 });
    this.#request = https ? httpsRequest : httpRequest;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.#shutdown) {
      resultCallback({
        code: ExportResultCode.FAILED,
        error: new ExportRequestError('the exporter was shut down'),
      });
      return;
    }
    const body = this.#encoder.encode(spans);
    const sending = this.#send(body).then(resultCallback);
    this.#inFlight.add(sending);
    void sending.finally(() => this.#inFlight.delete(sending));
  }

  /** Resolves when every request in flight has been answered. */
  async forceFlush(): Promise<void> {
    await Promise.all(this.#inFlight);
  }

  /** Refuses new exports and closes every connection, cutting requests still in flight. */
  shutdown(): Promise<void> {
    this.#shutdown = true;
    this.#agent.destroy();
    return Promise.resolve();
  }

  async #send(plain: Buffer): Promise<ExportResult> {
    let body = plain;
    try {
      if (this.#compress) body = await gzip(plain);
      const response = await this.#post(body);
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) return { code: ExportResultCode.SUCCESS };
      const retryAfter = Number(response.headers['retry-after']);
      return {
        code: ExportResultCode.FAILED,
        error: new ExportRequestError(`${this.#url.href} answered ${status}`, {
          code: status,
          ...(Number.isFinite(retryAfter) && retryAfter > 0
            ? { retryAfterMs: retryAfter * 1000 }
            : {}),
        }),
      };
    } catch (error) {
      return {
        code: ExportResultCode.FAILED,
        error: new ExportRequestError(`${this.#url.href}: ${(error as Error).message}`, {
          cause: error,
        }),
      };
    }
  }

  /** POSTs `body`; resolves with the answer once its body was read (and discarded). */
  #post(body: Buffer): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = this.#request(this.#url, {
        method: 'POST',
        agent: this.#agent,
        headers: { ...this.#headers, 'Content-Length': String(body.length) },
        timeout: this.#timeoutMs,
      });
      request.once('timeout', () =>
        request.destroy(new Error(`no answer within ${this.#timeoutMs} ms`)),
      );
      request.once('error', reject);
      request.once('response', (response) => {
        response.on('error', reject);
        response.on('end', () => resolve(response));
        response.resume();
      });
      request.end(body);
    });
  }
}
