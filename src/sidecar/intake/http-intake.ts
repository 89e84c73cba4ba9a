import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzip } from 'node:zlib';
import type { IntakeOutcome } from '../pipeline/index.js';

/** Options for {@link HttpIntake.start}. */
export interface HttpIntakeOptions {
  host: string;
  /** `0` picks a free port. */
  port: number;
  /** Bearer token every `POST /v1/events` must carry; `undefined` allows any caller. */
  token: string | undefined;
  /**
   * Largest request body, compressed or not, in bytes; larger ones get 413.
   * @default 16777216 (16 MiB)
   */
  maxBodyBytes?: number;
  /** Decodes and replays an NDJSON body. */
  ingest: (body: Buffer) => IntakeOutcome;
  /** While true, `POST /v1/events` answers 429 with `Retry-After`. */
  isFull: () => boolean;
  /** Whether the sidecar is ready to take events (for `/readyz`). */
  isReady: () => boolean;
  /** Prometheus text for `/metrics`. */
  renderMetrics: () => string;
  /**
   * Seconds a client is told to wait when the queue is full.
   * @default 1
   */
  retryAfterSeconds?: number;
}

const NDJSON_TYPES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/json',
]);

/**
 * The sidecar's HTTP side: `POST /v1/events` takes NDJSON envelopes (optionally gzip), and
 * `GET /healthz`, `/readyz` and `/metrics` serve probes and Prometheus. Every refusal has its own
 * status: 401 wrong or missing token, 413 body too large, 415 wrong content type, 429 (with
 * `Retry-After`) while the export queue is over its memory budget.
 */
export class HttpIntake {
  readonly #server: Server;
  readonly #options: HttpIntakeOptions;
  readonly #tokenDigest: Buffer | undefined;
  readonly #maxBodyBytes: number;
  #closed: Promise<void> | undefined;
  #ingesting = true;

  private constructor(server: Server, options: HttpIntakeOptions) {
    this.#server = server;
    this.#options = options;
    this.#maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
    this.#tokenDigest = options.token === undefined ? undefined : digest(options.token);
  }

  /** Starts listening; rejects when the address cannot be bound. */
  static async start(options: HttpIntakeOptions): Promise<HttpIntake> {
    const server = createServer();
    const intake = new HttpIntake(server, options);
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
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === '/healthz') {
      send(response, 200, 'text/plain', 'ok\n');
    } else if (request.method === 'GET' && path === '/readyz') {
      const ready = this.#closed === undefined && this.#options.isReady();
      send(response, ready ? 200 : 503, 'text/plain', ready ? 'ready\n' : 'not ready\n');
    } else if (request.method === 'GET' && path === '/metrics') {
      send(response, 200, 'text/plain; version=0.0.4', this.#options.renderMetrics());
    } else if (path === '/v1/events') {
      if (request.method !== 'POST') {
        response.setHeader('Allow', 'POST');
        refuse(request, response, 405, 'use POST to send events');
      } else {
        this.#receive(request, response);
      }
    } else {
      refuse(request, response, 404, `no route for ${request.method ?? ''} ${path ?? ''}`);
    }
  }

  #receive(request: IncomingMessage, response: ServerResponse): void {
    if (!this.#authorized(request)) {
      response.setHeader('WWW-Authenticate', 'Bearer');
      refuse(request, response, 401, 'missing or wrong bearer token');
      return;
    }
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!NDJSON_TYPES.has(contentType)) {
      refuse(
        request,
        response,
        415,
        `content type '${contentType}' is not accepted: send application/x-ndjson`,
      );
      return;
    }
    const encoding = (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      refuse(request, response, 415, `content encoding '${encoding}' is not accepted: use gzip`);
      return;
    }
    if (this.#options.isFull()) {
      response.setHeader('Retry-After', String(this.#options.retryAfterSeconds ?? 1));
      refuse(request, response, 429, 'the export queue is full; retry later');
      return;
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > this.#maxBodyBytes) {
      refuse(request, response, 413, `body exceeds ${this.#maxBodyBytes} bytes`);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > this.#maxBodyBytes) {
        tooLarge = true;
        chunks.length = 0;
        refuse(request, response, 413, `body exceeds ${this.#maxBodyBytes} bytes`);
        return;
      }
      chunks.push(chunk);
    });
    request.on('error', () => response.destroy());
    request.on('end', () => {
      if (tooLarge) return;
      const body = Buffer.concat(chunks, size);
      if (encoding === 'gzip') {
        gunzip(body, { maxOutputLength: this.#maxBodyBytes }, (error, inflated) => {
          if (error !== null) {
            const status = error instanceof RangeError ? 413 : 400;
            send(response, status, 'application/json', json({ error: `gzip: ${error.message}` }));
          } else {
            this.#answer(response, inflated);
          }
        });
      } else {
        this.#answer(response, body);
      }
    });
  }

  #answer(response: ServerResponse, body: Buffer): void {
    if (!this.#ingesting) {
      response.setHeader('Retry-After', String(this.#options.retryAfterSeconds ?? 1));
      send(response, 503, 'application/json', json({ error: 'the sidecar is shutting down' }));
      return;
    }
    let outcome: IntakeOutcome;
    try {
      outcome = this.#options.ingest(body);
    } catch (error) {
      send(response, 500, 'application/json', json({ error: String(error) }));
      return;
    }
    send(response, 200, 'application/json', json(outcome));
  }

  #authorized(request: IncomingMessage): boolean {
    if (this.#tokenDigest === undefined) return true;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (match === null) return false;
    return timingSafeEqual(digest(match[1]!), this.#tokenDigest);
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function json(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

/** Answers with an error and closes the connection rather than reading an unwanted body. */
function refuse(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  message: string,
): void {
  response.setHeader('Connection', 'close');
  send(response, status, 'application/json', json({ error: message }));
  request.resume();
}
