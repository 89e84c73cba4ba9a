import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { IntakeOutcome } from '../pipeline/index.js';
import type { ClientTokens } from './client-tokens.js';
import { ConnectionLimiter } from './connection-limiter.js';

const gunzipAsync = promisify(gunzip);

/** What the HTTP intake counts, for `/metrics` ({@link SidecarMetrics} implements it). */
export interface HttpIntakeMetrics {
  /** A request answered with `status` (401, 404, 405, 408, 413, 415, 429, 503, …). */
  httpRefused(status: number): void;
  /** A connection opened (`1`) or closed (`-1`). */
  httpConnections(delta: 1 | -1): void;
  /** A connection closed to make room (`evicted`) or refused because all were busy. */
  httpConnectionDropped(reason: 'evicted' | 'turned_away'): void;
}

/** Options for {@link HttpIntake.start}. */
export interface HttpIntakeOptions {
  host: string;
  /** `0` picks a free port. */
  port: number;
  /**
   * The bearer tokens `POST /v1/events` accepts, each naming a client; when none is required,
   * anyone may send (loopback only) and events belong to no client.
   */
  tokens: ClientTokens;
  /**
   * Whether `/metrics` needs a token too (listening beyond loopback); `/healthz` and `/readyz`
   * never do.
   * @default false
   */
  protectMetrics?: boolean;
  /**
   * Largest request body, compressed or not, in bytes; larger ones get 413.
   * @default 16777216 (16 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Open connections at most. At the limit the oldest idle one is closed to make room; only
   * when all are busy is a new one turned away.
   * @default 256
   */
  maxConnections?: number;
  /**
   * Time a connection has to send a request's headers (from connecting, or from its last
   * answer); slower ones are cut off.
   * @default 10000
   */
  headersTimeoutMs?: number;
  /** Time a request has to send its whole body once its headers arrived; then 408 and cut off. @default 30000 */
  bodyTimeoutMs?: number;
  /**
   * Body bytes held at once across all requests (being received, inflated or replayed); a
   * request that would go beyond gets 429 once its body was read.
   * @default 67108864 (64 MiB)
   */
  maxInflightBytes?: number;
  /** Decodes and replays an NDJSON body sent by `client` (`''` without tokens). */
  ingest: (body: Buffer, client: string) => Promise<IntakeOutcome>;
  /** While true, `POST /v1/events` answers 429 with `Retry-After` and `/readyz` 503. */
  isFull: () => boolean;
  /** Whether the sidecar is ready to take events (for `/readyz`). */
  isReady: () => boolean;
  /** Prometheus text for `/metrics`. */
  renderMetrics: () => string;
  /** Where refusals and connections are counted. @default nowhere */
  metrics?: HttpIntakeMetrics;
  /**
   * Seconds a client is told to wait when the queue is full.
   * @default 1
   */
  retryAfterSeconds?: number;
}

/** The defaults of {@link HttpIntakeOptions}' limits. */
export const HTTP_INTAKE_DEFAULTS = {
  maxBodyBytes: 16 * 1024 * 1024,
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  maxInflightBytes: 64 * 1024 * 1024,
} as const;

const NDJSON_TYPES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/json',
]);

/** An answer other than 200, given once the request body was read. */
interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/**
 * The sidecar's HTTP side: `POST /v1/events` takes NDJSON envelopes (optionally gzip), and
 * `GET /healthz`, `/readyz` and `/metrics` serve probes and Prometheus. Every refusal has its own
 * status: 401 wrong or missing token, 413 body too large, 415 wrong content type, 429 (with
 * `Retry-After`) while the export queue is over its memory budget or too many body bytes are
 * held, 408 for a body that does not arrive in time. A refusal is sent once the body was read
 * (and thrown away), so the client sees the status rather than a reset connection. Bodies are
 * replayed one at a time, in slices, so probes answer while a large one is replayed.
 */
export class HttpIntake {
  readonly #server: Server;
  readonly #options: HttpIntakeOptions;
  readonly #maxBodyBytes: number;
  readonly #maxInflightBytes: number;
  readonly #bodyTimeoutMs: number;
  #limiter!: ConnectionLimiter;
  #inflightBytes = 0;
  /** The body being replayed; the next one waits for it (bodies keep their order). */
  #replaying: Promise<unknown> = Promise.resolve();
  #closed: Promise<void> | undefined;
  #ingesting = true;

  private constructor(server: Server, options: HttpIntakeOptions) {
    this.#server = server;
    this.#options = options;
    this.#maxBodyBytes = options.maxBodyBytes ?? HTTP_INTAKE_DEFAULTS.maxBodyBytes;
    this.#maxInflightBytes = options.maxInflightBytes ?? HTTP_INTAKE_DEFAULTS.maxInflightBytes;
    this.#bodyTimeoutMs = options.bodyTimeoutMs ?? HTTP_INTAKE_DEFAULTS.bodyTimeoutMs;
  }

  /** Starts listening; rejects when the address cannot be bound. */
  static async start(options: HttpIntakeOptions): Promise<HttpIntake> {
    const headersTimeoutMs = options.headersTimeoutMs ?? HTTP_INTAKE_DEFAULTS.headersTimeoutMs;
    const bodyTimeoutMs = options.bodyTimeoutMs ?? HTTP_INTAKE_DEFAULTS.bodyTimeoutMs;
    const server = createServer({
      headersTimeout: headersTimeoutMs,
      // A backstop behind the body timer: Node cuts a request still arriving after this.
      requestTimeout: headersTimeoutMs + bodyTimeoutMs + 5000,
      // How often Node looks for connections past those timeouts (its default is 30 s).
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs),
    });
    const intake = new HttpIntake(server, options);
    intake.#limiter = new ConnectionLimiter(
      server,
      options.maxConnections ?? HTTP_INTAKE_DEFAULTS.maxConnections,
      options.metrics,
    );
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      intake.#handle(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return intake;
  }

  /** The bound address, with the real port when `0` was asked for. */
  get address(): { host: string; port: number } {
    const address = this.#server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  /** Base URL of the intake, for example `http://127.0.0.1:4319`. */
  get url(): string {
    const { host, port } = this.address;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }

  /** Connections open now. */
  get connections(): number {
    return this.#limiter.open;
  }

  /**
   * Stops accepting connections and waits for open requests to finish; connections still open
   * after `graceMs` (a client keeping a busy keep-alive connection) are cut. Safe to call twice.
   */
  close(graceMs = 1000): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.#server.closeAllConnections(), graceMs);
      timer.unref();
      this.#server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#server.closeIdleConnections();
    });
    return this.#closed;
  }

  /**
   * From now on, bodies still arriving are answered 503 with `Retry-After` instead of being
   * replayed: the tracer is shutting down, and a forwarder will send them to the next sidecar.
   */
  stopIngesting(): void {
    this.#ingesting = false;
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    this.#limiter.busy(socket);
    response.once('close', () => this.#limiter.idle(socket));
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === '/healthz') {
      send(response, 200, 'text/plain', 'ok\n');
    } else if (request.method === 'GET' && path === '/readyz') {
      const ready =
        this.#closed === undefined &&
        this.#options.isReady() &&
        !this.#options.isFull() &&
        this.#inflightBytes < this.#maxInflightBytes;
      send(response, ready ? 200 : 503, 'text/plain', ready ? 'ready\n' : 'not ready\n');
    } else if (request.method === 'GET' && path === '/metrics') {
      if (this.#options.protectMetrics === true && this.#clientOf(request) === undefined) {
        this.#refuse(response, this.#unauthorized());
      } else {
        send(response, 200, 'text/plain; version=0.0.4', this.#options.renderMetrics());
      }
    } else if (path === '/v1/events' && request.method === 'POST') {
      this.#receive(request, response);
    } else if (path === '/v1/events') {
      this.#readThenRefuse(request, response, {
        status: 405,
        message: 'use POST to send events',
        headers: { Allow: 'POST' },
      });
    } else {
      this.#readThenRefuse(request, response, {
        status: 404,
        message: `no route for ${request.method ?? ''} ${path ?? ''}`,
      });
    }
  }

  /** What is wrong with a `POST /v1/events` before its body is read, if anything. */
  #check(request: IncomingMessage): Refusal | undefined {
    if (this.#clientOf(request) === undefined) return this.#unauthorized();
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!NDJSON_TYPES.has(contentType)) {
      return {
        status: 415,
        message: `content type '${contentType}' is not accepted: send application/x-ndjson`,
      };
    }
    const encoding = contentEncoding(request);
    if (encoding !== 'identity' && encoding !== 'gzip') {
      return { status: 415, message: `content encoding '${encoding}' is not accepted: use gzip` };
    }
    if (this.#options.isFull()) return this.#busy('the export queue is full; retry later');
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > this.#maxBodyBytes) return this.#tooLarge();
    if (declared > 0 && this.#inflightBytes + declared > this.#maxInflightBytes) {
      return this.#busy('too many bytes are being received; retry later');
    }
    return undefined;
  }

  #receive(request: IncomingMessage, response: ServerResponse): void {
    const client = this.#clientOf(request) ?? '';
    const early = this.#check(request);
    if (early !== undefined) {
      this.#readThenRefuse(request, response, early);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    let refusal: Refusal | undefined;
    const release = (): void => {
      this.#inflightBytes -= held;
      held = 0;
    };
    const drop = (why: Refusal): void => {
      refusal = why;
      chunks.length = 0;
      release();
    };
    const cancelTimer = this.#startBodyTimer(request, response, release);
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (refusal !== undefined) {
        if (size > 2 * this.#maxBodyBytes) this.#giveUpReading(request, response, refusal);
      } else if (size > this.#maxBodyBytes) {
        drop(this.#tooLarge());
      } else if (this.#inflightBytes + chunk.length > this.#maxInflightBytes) {
        drop(this.#busy('too many bytes are being received; retry later'));
      } else {
        this.#inflightBytes += chunk.length;
        held += chunk.length;
        chunks.push(chunk);
      }
    });
    request.on('error', () => {
      cancelTimer();
      release();
    });
    request.on('end', () => {
      cancelTimer();
      if (refusal !== undefined) {
        this.#refuse(response, refusal);
        return;
      }
      const body = Buffer.concat(chunks, size);
      chunks.length = 0;
      void this.#accept(request, response, body, client, (bytes) => {
        this.#inflightBytes += bytes;
        held += bytes;
      }).finally(release);
    });
  }

  /** Inflates and replays a body read whole, then answers with what became of it. */
  async #accept(
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer,
    client: string,
    hold: (bytes: number) => void,
  ): Promise<void> {
    let events = body;
    if (contentEncoding(request) === 'gzip') {
      try {
        events = await gunzipAsync(body, { maxOutputLength: this.#maxBodyBytes });
      } catch (error) {
        const status = error instanceof RangeError ? 413 : 400;
        this.#refuse(response, { status, message: `gzip: ${(error as Error).message}` });
        return;
      }
      hold(events.length);
    }
    if (!this.#ingesting) {
      this.#refuse(response, this.#shuttingDown());
      return;
    }
    const replay = this.#replaying.then(() => this.#options.ingest(events, client));
    this.#replaying = replay.catch(() => {});
    let outcome: IntakeOutcome;
    try {
      outcome = await replay;
    } catch (error) {
      send(response, 500, 'application/json', json({ error: String(error) }));
      return;
    }
    send(response, 200, 'application/json', json(outcome));
  }

  /** Answers 408 and cuts the connection when the body has not arrived in time. */
  #startBodyTimer(
    request: IncomingMessage,
    response: ServerResponse,
    release: () => void,
  ): () => void {
    const timer = setTimeout(() => {
      release();
      response.setHeader('Connection', 'close');
      const seconds = this.#bodyTimeoutMs / 1000;
      this.#refuse(response, { status: 408, message: `body not sent within ${seconds}s` });
      response.once('finish', () => request.socket.destroy());
      // A sender too slow to take even the answer is cut off anyway.
      setTimeout(() => request.socket.destroy(), 1000).unref();
    }, this.#bodyTimeoutMs);
    timer.unref();
    return () => clearTimeout(timer);
  }

  /**
   * Reads the body and throws it away, then answers with `refusal`: a client still uploading
   * would see a reset connection (EPIPE) instead of the status if the answer came first and the
   * connection closed. A body beyond twice the size limit is not read on: the answer goes out
   * and the connection closes.
   */
  #readThenRefuse(request: IncomingMessage, response: ServerResponse, refusal: Refusal): void {
    const cancelTimer = this.#startBodyTimer(request, response, () => {});
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 2 * this.#maxBodyBytes) this.#giveUpReading(request, response, refusal);
    });
    request.on('error', cancelTimer);
    request.on('end', () => {
      cancelTimer();
      this.#refuse(response, refusal);
    });
  }

  #giveUpReading(request: IncomingMessage, response: ServerResponse, refusal: Refusal): void {
    if (response.headersSent) return;
    response.setHeader('Connection', 'close');
    this.#refuse(response, refusal);
    request.pause();
  }

  #refuse(response: ServerResponse, refusal: Refusal): void {
    if (response.headersSent) return;
    this.#options.metrics?.httpRefused(refusal.status);
    refuse(response, refusal);
  }

  #busy(message: string): Refusal {
    return {
      status: 429,
      message,
      headers: { 'Retry-After': String(this.#options.retryAfterSeconds ?? 1) },
    };
  }

  #tooLarge(): Refusal {
    return { status: 413, message: `body exceeds ${this.#maxBodyBytes} bytes` };
  }

  #shuttingDown(): Refusal {
    return {
      status: 503,
      message: 'the sidecar is shutting down',
      headers: { 'Retry-After': String(this.#options.retryAfterSeconds ?? 1) },
    };
  }

  /** The client a request's bearer token names; `''` when no token is required; `undefined` when refused. */
  #clientOf(request: IncomingMessage): string | undefined {
    const tokens = this.#options.tokens;
    if (!tokens.required) return '';
    const match = /^Bearer\s+(.+)$/i.exec((request.headers.authorization ?? '').trim());
    return match === null ? undefined : tokens.clientOf(match[1]!);
  }

  #unauthorized(): Refusal {
    return {
      status: 401,
      message: 'missing or wrong bearer token',
      headers: { 'WWW-Authenticate': 'Bearer' },
    };
  }
}

function contentEncoding(request: IncomingMessage): string {
  return (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
}

function json(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

function refuse(response: ServerResponse, refusal: Refusal): void {
  if (response.headersSent) return;
  for (const [name, value] of Object.entries(refusal.headers ?? {})) {
    response.setHeader(name, value);
  }
  send(response, refusal.status, 'application/json', json({ error: refusal.message }));
}
