import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IntakeOutcome } from '../pipeline/index.js';
import {
  busy,
  json,
  refuse,
  send,
  shuttingDown,
  tooLarge,
  unauthorized,
  type Refusal,
} from './http-answer.js';
import { ConnectionLimiter } from './connection-limiter.js';
import { gunzipChunks, InflatedTooLargeError } from './gunzip-chunks.js';
import { HTTP_INTAKE_DEFAULTS, type HttpIntakeOptions } from './http-intake-options.js';

/** How long a turned-away client's body is still read before its connection is cut. */
const TURN_AWAY_MS = 1000;
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
  readonly #retryAfterSeconds: number;
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
    this.#retryAfterSeconds = options.retryAfterSeconds ?? 1;
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
    // HEAD is answered as GET (Node leaves the body out): some probes and load balancers use it.
    const reading = request.method === 'GET' || request.method === 'HEAD';
    if (reading && path === '/healthz') {
      send(response, 200, 'text/plain', 'ok\n');
    } else if (reading && path === '/readyz') {
      const ready =
        this.#closed === undefined &&
        this.#options.isReady() &&
        !this.#options.isFull() &&
        this.#inflightBytes < this.#maxInflightBytes;
      send(response, ready ? 200 : 503, 'text/plain', ready ? 'ready\n' : 'not ready\n');
    } else if (reading && path === '/metrics') {
      if (this.#options.protectMetrics === true && this.#clientOf(request) === undefined) {
        this.#refuse(response, unauthorized());
      } else {
        send(response, 200, 'text/plain; version=0.0.4', this.#options.renderMetrics());
      }
    } else if (path === '/v1/events' && request.method === 'POST') {
      this.#receive(request, response);
    } else if (path === '/v1/events') {
      this.#refuseRoute(request, response, {
        status: 405,
        message: 'use POST to send events',
        headers: { Allow: 'POST' },
      });
    } else {
      this.#refuseRoute(request, response, {
        status: 404,
        message: `no route for ${request.method ?? ''} ${path ?? ''}`,
      });
    }
  }

  /** What is wrong with a `POST /v1/events` before its body is read, if anything. */
  #check(request: IncomingMessage): Refusal | undefined {
    if (this.#clientOf(request) === undefined) return unauthorized();
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
    if (this.#options.isFull())
      return busy('the export queue is full; retry later', this.#retryAfterSeconds);
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > this.#maxBodyBytes) return tooLarge(this.#maxBodyBytes);
    if (declared > 0 && this.#inflightBytes + declared > this.#maxInflightBytes) {
      return busy('too many bytes are being received; retry later', this.#retryAfterSeconds);
    }
    return undefined;
  }

  #receive(request: IncomingMessage, response: ServerResponse): void {
    const client = this.#clientOf(request) ?? '';
    const early = this.#check(request);
    if (early !== undefined) {
      if (early.status === 401) this.#turnAway(request, response, early);
      else this.#readThenRefuse(request, response, early);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    let refusal: Refusal | undefined;
    const release = (): void => {
      this.#hold(-held);
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
        drop(tooLarge(this.#maxBodyBytes));
      } else if (this.#inflightBytes + chunk.length > this.#maxInflightBytes) {
        drop(busy('too many bytes are being received; retry later', this.#retryAfterSeconds));
      } else {
        this.#hold(chunk.length);
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
      // Kept as the chunks it came in: joining 16 MiB would hold the event loop on its own.
      const body = chunks.splice(0);
      void this.#accept(request, response, body, client, (bytes) => {
        this.#hold(bytes);
        held += bytes;
      }).finally(release);
    });
  }

  /** Inflates and replays a body read whole, then answers with what became of it. */
  async #accept(
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer[],
    client: string,
    hold: (bytes: number) => void,
  ): Promise<void> {
    let events = body;
    if (contentEncoding(request) === 'gzip') {
      try {
        events = await gunzipChunks(body, this.#maxBodyBytes);
      } catch (error) {
        const status = error instanceof InflatedTooLargeError ? 413 : 400;
        this.#refuse(response, { status, message: `gzip: ${(error as Error).message}` });
        return;
      }
      hold(events.reduce((sum, chunk) => sum + chunk.length, 0));
    }
    if (!this.#ingesting) {
      this.#refuse(response, shuttingDown(this.#retryAfterSeconds));
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
    if ((outcome.unread ?? 0) > 0) {
      // The queue filled while this body was read: what was read is taken, the rest is not.
      // 429 tells a plain client to send again (a resent line is recognized by its event id);
      // `unread` tells ours to send only the rest.
      response.setHeader('Retry-After', String(this.#retryAfterSeconds));
      send(response, 429, 'application/json', json(outcome));
      return;
    }
    send(
      response,
      200,
      'application/json',
      json({ accepted: outcome.accepted, rejected: outcome.rejected }),
    );
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

  /** A wrong route: read politely for a client with a valid token, turned away otherwise. */
  #refuseRoute(request: IncomingMessage, response: ServerResponse, refusal: Refusal): void {
    if (this.#clientOf(request) === undefined) this.#turnAway(request, response, refusal);
    else this.#readThenRefuse(request, response, refusal);
  }

  /**
   * Answers a client without a valid token at once and closes the connection, reading what
   * arrives meanwhile for at most {@link TURN_AWAY_MS} so the answer is likely seen. Its
   * connection stops counting as busy right away: reading its body the polite way would let
   * anyone without a token hold a connection slot for the whole body timeout, and enough of them
   * would turn away the probes and the real clients.
   */
  #turnAway(request: IncomingMessage, response: ServerResponse, refusal: Refusal): void {
    const socket = request.socket;
    this.#limiter.idle(socket);
    // No `Connection: close`: Node would cut the socket as soon as the answer is out, and a
    // client still uploading over a real network would see a reset instead of the status.
    this.#refuse(response, refusal);
    request.resume();
    setTimeout(() => socket.destroy(), TURN_AWAY_MS).unref();
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

  /** Counts body bytes taken (positive) or given back (negative). */
  #hold(bytes: number): void {
    if (bytes === 0) return;
    this.#inflightBytes += bytes;
    this.#options.metrics?.httpInflightBytes(bytes);
  }

  #refuse(response: ServerResponse, refusal: Refusal): void {
    if (response.headersSent) return;
    this.#options.metrics?.httpRefused(refusal.status);
    const request = response.req;
    this.#options.refusals?.refused(
      {
        method: request.method ?? '',
        path: (request.url ?? '/').split('?')[0] ?? '',
        remoteAddress: request.socket.remoteAddress ?? '',
        client: this.#clientOf(request),
      },
      refusal,
    );
    refuse(response, refusal);
  }

  /** The client a request's bearer token names; `''` when no token is required; `undefined` when refused. */
  #clientOf(request: IncomingMessage): string | undefined {
    const tokens = this.#options.tokens;
    if (!tokens.required) return '';
    const match = /^Bearer\s+(.+)$/i.exec((request.headers.authorization ?? '').trim());
    return match === null ? undefined : tokens.clientOf(match[1]!);
  }
}

function contentEncoding(request: IncomingMessage): string {
  return (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
}
