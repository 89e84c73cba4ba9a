import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeLogsRequest,
  decodeMetricsRequest,
  decodeTraceRequest,
  OtlpDecodeError,
  otlpEncodingOf,
  type ReceivedLogRecord,
  type ReceivedMetricPoint,
  type ReceivedSpan,
} from '../otlp/read.js';
import { CountWaiters, type WaitFailure } from './count-waiters.js';
import { RPC_CODE, writeOtlpAnswer, type OtlpAnswer } from './otlp-answer.js';
import { decompressBody, readRequestBody } from './read-request-body.js';
import { ReceiverWaitError } from './receiver-wait-error.js';

const TRACES_PATH = '/v1/traces';
const LOGS_PATH = '/v1/logs';
const METRICS_PATH = '/v1/metrics';
const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
const DEFAULT_WAIT_MS = 10_000;

/**
 * HTTP status and gRPC code for each way undoing `Content-Encoding` can fail. An encoding it does
 * not know is a 400, as the Collector answers it (not 415, which is for the content type).
 */
const DECOMPRESSION_FAILURES = {
  unsupported: [400, RPC_CODE.invalidArgument],
  'too-large': [413, RPC_CODE.resourceExhausted],
  malformed: [400, RPC_CODE.invalidArgument],
} as const;

/** The gRPC code a Collector puts in the `google.rpc.Status` of each HTTP status. */
const RPC_CODE_OF_STATUS: Readonly<Record<number, number>> = {
  400: RPC_CODE.invalidArgument,
  401: RPC_CODE.unauthenticated,
  403: RPC_CODE.permissionDenied,
  404: RPC_CODE.notFound,
  413: RPC_CODE.resourceExhausted,
  429: RPC_CODE.resourceExhausted,
  500: RPC_CODE.internal,
  502: RPC_CODE.unavailable,
  503: RPC_CODE.unavailable,
  504: RPC_CODE.unavailable,
};

/** Options for {@link startOtlpReceiver}. */
export interface OtlpReceiverOptions {
  /**
   * Address to listen on.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Port to listen on; `0` picks a free one.
   * @default 0
   */
  port?: number;
  /**
   * Answer this many of the next trace requests with 503, as an overloaded collector would.
   * @default 0
   */
  failNext?: number;
  /**
   * `Retry-After` (seconds) sent with every 503. `0` lets OTLP exporters retry at once, which
   * keeps tests fast; raise it to test back-off.
   * @default 0
   */
  retryAfterSeconds?: number;
  /**
   * Largest accepted body, on the wire and after decompression; larger ones get 413.
   * @default 67108864 (64 MiB)
   */
  maxBodyBytes?: number;
}

/**
 * An answer a test scripts for a coming trace request ({@link OtlpReceiver.answerNext}): a
 * status other than 2xx refuses the request (its spans are not kept) with a `google.rpc.Status`
 * carrying `message`; a 2xx keeps them and may report a `partial_success`.
 */
export interface ScriptedAnswer {
  /** @default 200 */
  status?: number;
  /** The `google.rpc.Status` message of a failure. @default a description of the status */
  message?: string;
  /** The `Retry-After` header, as sent: delay-seconds (`'3'`) or an HTTP date. */
  retryAfter?: string;
  /** For a 2xx: spans to report as rejected, and why. */
  partialSuccess?: { rejectedSpans: number; errorMessage?: string };
  /** Answer only after this many milliseconds, as a slow collector would. @default 0 */
  delayMs?: number;
}

/** One HTTP request the receiver answered, whatever the outcome. */
export interface ReceivedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/traces`. */
  path: string;
  /** The `Content-Type` header, `''` when absent. */
  contentType: string;
  /** The `Content-Encoding` header, `''` when absent. */
  contentEncoding: string;
  /** Request headers, names in lowercase, repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Body size on the wire, before decompression. */
  bytes: number;
  /** HTTP status the receiver answered with. */
  status: number;
  /** Spans or log records the request carried; `0` unless it was accepted. */
  itemCount: number;
  /**
   * Spans a trace request refused by a scripted answer carried (decoded only to count them, not
   * kept), so a test can tell a batch sent once from one sent again; `0` otherwise.
   */
  refusedCount: number;
  /** Why the request was refused; `''` when it was accepted. */
  error: string;
}

/**
 * A real OTLP/HTTP receiver in the test process: what an OpenTelemetry Collector would be, minus
 * the forwarding. It accepts `POST /v1/traces`, `POST /v1/logs` and `POST /v1/metrics` in
 * protobuf or JSON, gzip or deflate compressed or not, answers as the OTLP/HTTP specification says, and keeps every span
 * and log record it decoded, in arrival order, for assertions.
 */
export interface OtlpReceiver {
  /** Base URL, e.g. `http://127.0.0.1:40123`: the value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string;
  /** `url` + `/v1/traces`: the value for an exporter's `url` option. */
  readonly tracesUrl: string;
  /** `url` + `/v1/logs`. */
  readonly logsUrl: string;
  /** Spans received so far, in arrival order. {@link OtlpReceiver.clear} starts a new list. */
  readonly spans: readonly ReceivedSpan[];
  /** Log records received so far, in arrival order. */
  readonly logs: readonly ReceivedLogRecord[];
  /**
   * Metric data points received so far (`POST /v1/metrics`), in arrival order:
   * each export of a cumulative metric adds its points again.
   */
  readonly metrics: readonly ReceivedMetricPoint[];
  /** Every request answered so far, refused ones included, in the order they were answered. */
  readonly requests: readonly ReceivedRequest[];
  /**
   * Resolves with a copy of {@link OtlpReceiver.spans} once at least `count` spans arrived.
   * Rejects with a {@link ReceiverWaitError} saying how many did after `timeoutMs` (default
   * 10 s), or when the receiver closes.
   */
  waitForSpans(count: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Like {@link OtlpReceiver.waitForSpans}, for log records. */
  waitForLogs(count: number, timeoutMs?: number): Promise<ReceivedLogRecord[]>;
  /** Like {@link OtlpReceiver.waitForSpans}, for answered requests of any outcome. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** While `false`, every OTLP request gets 503 with `Retry-After`, as if the collector were down. */
  setAvailable(available: boolean): void;
  /** Answers the next `count` trace requests with 503 (adds to any still pending). */
  failNext(count: number): void;
  /**
   * Answers the next trace requests with `answers`, one each, in order (after any `failNext`);
   * once they are used up, requests are answered normally again. Answers add to those pending.
   */
  answerNext(...answers: ScriptedAnswer[]): void;
  /** Answers every trace request with `answer` from now on; `undefined` goes back to normal. */
  answerAlways(answer: ScriptedAnswer | undefined): void;
  /** Forgets received spans, log records and requests. Pending waits keep waiting. */
  clear(): void;
  /** Stops listening and drops open connections. Safe to call more than once. */
  close(): Promise<void>;
}

/**
 * Starts an {@link OtlpReceiver} on `127.0.0.1` and a free port (by default) and resolves once
 * it listens. Close it when done (`afterEach(() => receiver.close())`); closing twice is fine.
 * Options are checked here: a negative or fractional number throws a `TypeError`.
 */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const resolved = {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    failNext: options.failNext ?? 0,
    retryAfterSeconds: options.retryAfterSeconds ?? 0,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  };
  for (const name of ['port', 'failNext', 'retryAfterSeconds', 'maxBodyBytes'] as const) {
    checkCount(resolved[name], name);
  }
  const receiver = new HttpOtlpReceiver(resolved);
  await receiver.listen();
  return receiver;
}

type ResolvedOptions = Required<OtlpReceiverOptions>;

function checkCount(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
}

class HttpOtlpReceiver implements OtlpReceiver {
  readonly #options: ResolvedOptions;
  readonly #server: Server;
  #url = '';
  #spans: ReceivedSpan[] = [];
  #logs: ReceivedLogRecord[] = [];
  #metrics: ReceivedMetricPoint[] = [];
  #requests: ReceivedRequest[] = [];
  readonly #waiters = new CountWaiters();
  #available = true;
  #failNext: number;
  #scripted: ScriptedAnswer[] = [];
  #always: ScriptedAnswer | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#failNext = options.failNext;
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        // Only a bug in the receiver gets here; answer rather than leave the client hanging.
        if (!response.headersSent && !response.destroyed) {
          writeOtlpAnswer(response, {
            status: 500,
            encoding: 'json',
            failure: { code: RPC_CODE.internal, message: String(error) },
          });
        }
      });
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#options.port, this.#options.host, () => {
        this.#server.off('error', reject);
        const address = this.#server.address() as AddressInfo;
        const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        this.#url = `http://${host}:${address.port}`;
        resolve();
      });
    });
  }

  get url(): string {
    return this.#url;
  }

  get tracesUrl(): string {
    return this.#url + TRACES_PATH;
  }

  get logsUrl(): string {
    return this.#url + LOGS_PATH;
  }

  get spans(): readonly ReceivedSpan[] {
    return this.#spans;
  }

  get logs(): readonly ReceivedLogRecord[] {
    return this.#logs;
  }

  get metrics(): readonly ReceivedMetricPoint[] {
    return this.#metrics;
  }

  get requests(): readonly ReceivedRequest[] {
    return this.#requests;
  }

  waitForSpans(count: number, timeoutMs = DEFAULT_WAIT_MS): Promise<ReceivedSpan[]> {
    return this.#waitFor('spans', count, timeoutMs, () => this.#spans);
  }

  waitForLogs(count: number, timeoutMs = DEFAULT_WAIT_MS): Promise<ReceivedLogRecord[]> {
    return this.#waitFor('log records', count, timeoutMs, () => this.#logs);
  }

  waitForRequests(count: number, timeoutMs = DEFAULT_WAIT_MS): Promise<ReceivedRequest[]> {
    return this.#waitFor('requests', count, timeoutMs, () => this.#requests);
  }

  setAvailable(available: boolean): void {
    this.#available = available;
  }

  failNext(count: number): void {
    checkCount(count, 'count');
    this.#failNext += count;
  }

  answerNext(...answers: ScriptedAnswer[]): void {
    this.#scripted.push(...answers);
  }

  answerAlways(answer: ScriptedAnswer | undefined): void {
    this.#always = answer;
  }

  clear(): void {
    this.#spans = [];
    this.#logs = [];
    this.#metrics = [];
    this.#requests = [];
  }

  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#waiters.failAll('closed');
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closing;
  }

  #waitFor<T>(
    what: string,
    count: number,
    timeoutMs: number,
    items: () => readonly T[],
  ): Promise<T[]> {
    checkCount(count, 'count');
    checkCount(timeoutMs, 'timeoutMs');
    const failure = (reason: WaitFailure): ReceiverWaitError =>
      this.#waitError(reason, what, count, items().length, timeoutMs);
    if (this.#closing !== undefined && items().length < count) {
      return Promise.reject(failure('closed'));
    }
    return this.#waiters.wait(items, count, timeoutMs, failure);
  }

  #waitError(
    reason: WaitFailure,
    what: string,
    expected: number,
    received: number,
    timeoutMs: number,
  ): ReceiverWaitError {
    const statuses = this.#requests.map((request) => `${request.path} ${request.status}`);
    const answered =
      statuses.length === 0
        ? 'no request reached it'
        : `it answered ${statuses.length} request(s): ${summarize(statuses)}`;
    const arrived =
      what === 'spans' && this.#spans.length > 0
        ? ` (${summarize(this.#spans.map((span) => span.name))})`
        : '';
    const when = reason === 'timeout' ? `within ${timeoutMs} ms` : 'before the receiver was closed';
    return new ReceiverWaitError(
      `expected ${expected} ${what} at ${this.#url} ${when}, ${received} arrived${arrived}; ${answered}`,
      { reason, what, expected, received },
    );
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://receiver').pathname;
    const record: ReceivedRequest = {
      method: request.method ?? '',
      path,
      contentType: request.headers['content-type'] ?? '',
      contentEncoding: request.headers['content-encoding'] ?? '',
      headers: headersOf(request),
      bytes: 0,
      status: 0,
      itemCount: 0,
      refusedCount: 0,
      error: '',
    };
    const { bytes, body } = await readRequestBody(request, this.#options.maxBodyBytes);
    record.bytes = bytes;
    const answer = await this.#answer(record, body);
    record.status = answer.status;
    record.error = answer.failure?.message ?? '';
    this.#requests.push(record);
    writeOtlpAnswer(response, answer);
    this.#waiters.notify();
  }

  /** How many spans a trace request carries, `0` when it cannot be read. */
  async #countSpans(body: Buffer | undefined, record: ReceivedRequest): Promise<number> {
    if (body === undefined) return 0;
    const plain = await decompressBody(body, record.contentEncoding, this.#options.maxBodyBytes);
    if (plain.status !== 'success') return 0;
    try {
      return decodeTraceRequest(plain.body, record.contentType).length;
    } catch {
      return 0;
    }
  }

  /** Decides the answer and, for an accepted request, stores what it carried. */
  async #answer(record: ReceivedRequest, body: Buffer | undefined): Promise<OtlpAnswer> {
    const signal =
      record.path === TRACES_PATH
        ? 'traces'
        : record.path === LOGS_PATH
          ? 'logs'
          : record.path === METRICS_PATH
            ? 'metrics'
            : undefined;
    const encoding = otlpEncodingOf(record.contentType);
    const failure = (status: number, code: number, message: string): OtlpAnswer => ({
      status,
      encoding: encoding ?? 'json',
      failure: { code, message },
    });
    if (signal === undefined) {
      return failure(404, RPC_CODE.notFound, `no OTLP endpoint at ${record.path}`);
    }
    if (record.method !== 'POST') {
      return {
        ...failure(405, RPC_CODE.unimplemented, `${record.method} is not allowed, use POST`),
        headers: { Allow: 'POST' },
      };
    }
    const failing = signal === 'traces' && this.#failNext > 0;
    if (failing) this.#failNext -= 1;
    if (!this.#available || failing) {
      return {
        ...failure(503, RPC_CODE.unavailable, 'the receiver is unavailable'),
        headers: { 'Retry-After': String(this.#options.retryAfterSeconds) },
      };
    }
    const scripted = signal === 'traces' ? (this.#scripted.shift() ?? this.#always) : undefined;
    if (scripted?.delayMs !== undefined && scripted.delayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    }
    const status = scripted?.status ?? 200;
    const headers =
      scripted?.retryAfter === undefined ? undefined : { 'Retry-After': scripted.retryAfter };
    if (status < 200 || status > 299) {
      record.refusedCount = await this.#countSpans(body, record);
      return {
        ...failure(
          status,
          RPC_CODE_OF_STATUS[status] ?? RPC_CODE.unknown,
          scripted?.message ?? `scripted answer ${status}`,
        ),
        ...(headers === undefined ? {} : { headers }),
      };
    }
    if (encoding === undefined) {
      return failure(
        415,
        RPC_CODE.invalidArgument,
        `unsupported content type ${JSON.stringify(record.contentType)}: expected application/x-protobuf or application/json`,
      );
    }
    if (body === undefined) {
      return failure(
        413,
        RPC_CODE.resourceExhausted,
        `body of ${record.bytes} bytes is larger than ${this.#options.maxBodyBytes} bytes`,
      );
    }
    const plain = await decompressBody(body, record.contentEncoding, this.#options.maxBodyBytes);
    if (plain.status !== 'success') {
      const [status, code] = DECOMPRESSION_FAILURES[plain.status];
      return failure(status, code, plain.message);
    }
    try {
      if (signal === 'traces') {
        const spans = decodeTraceRequest(plain.body, record.contentType);
        for (const span of spans) this.#spans.push(span);
        record.itemCount = spans.length;
      } else if (signal === 'logs') {
        const logs = decodeLogsRequest(plain.body, record.contentType);
        for (const log of logs) this.#logs.push(log);
        record.itemCount = logs.length;
      } else {
        const points = decodeMetricsRequest(plain.body, record.contentType);
        for (const point of points) this.#metrics.push(point);
        record.itemCount = points.length;
      }
    } catch (error) {
      if (error instanceof OtlpDecodeError) {
        return failure(400, RPC_CODE.invalidArgument, error.message);
      }
      throw error;
    }
    const partial = scripted?.partialSuccess;
    return {
      status,
      encoding,
      ...(headers === undefined ? {} : { headers }),
      ...(partial === undefined
        ? {}
        : {
            partialSuccess: {
              rejectedSpans: partial.rejectedSpans,
              errorMessage: partial.errorMessage ?? '',
            },
          }),
    };
  }
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function summarize(items: readonly string[]): string {
  const shown = items.slice(0, 10).join(', ');
  return items.length > 10 ? `${shown}, … ${items.length - 10} more` : shown;
}
