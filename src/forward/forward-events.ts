import { diag } from '@opentelemetry/api';
import { open, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { BusEvent, EventBus } from '../bus/index.js';
import { VERSION } from '../version.js';
import { encodeEnvelope } from '../wire/index.js';

const gzip = promisify(gzipCallback);

/** Where and how {@link forwardEvents} sends events. Give `url` or `file`. */
export interface ForwardOptions {
  /** Base URL of a sidecar's `--listen` address; events go to `${url}/v1/events`. */
  url?: string;
  /** A journal file to append NDJSON lines to (the sidecar's `--file` can tail it). */
  file?: string;
  /**
   * Bearer token for the sidecar.
   * @default process.env.TOOLTRACE_TOKEN
   */
  token?: string;
  /**
   * Events per request or write.
   * @default 512
   */
  batchSize?: number;
  /**
   * How long an event may wait for its batch to fill.
   * @default 100
   */
  flushIntervalMs?: number;
  /**
   * Events held at most (queued and in flight). Past it new events are dropped and counted:
   * the agent never waits for the sidecar.
   * @default 20000
   */
  maxQueueSize?: number;
  /**
   * Compress request bodies with gzip.
   * @default false
   */
  compress?: boolean;
  /** First retry delay after a failed send, doubled per failure up to `maxBackoffMs`. @default 250 */
  initialBackoffMs?: number;
  /** @default 5000 */
  maxBackoffMs?: number;
  /**
   * How long one request may take before it is abandoned and retried.
   * @default 10000
   */
  requestTimeoutMs?: number;
  /** Which events to forward. @default every event */
  filter?: (event: BusEvent) => boolean;
}

/** Counters of a {@link Forwarder}. */
export interface ForwarderStats {
  /** Events the sidecar or the file took. */
  sent: number;
  /** Events dropped because the queue was full, or because they could not be encoded. */
  dropped: number;
  /** Events the sidecar refused for good (a 4xx other than 429), by status. */
  refused: number;
  /** Send attempts that failed and were retried. */
  retries: number;
  /** Events waiting or in flight. */
  queued: number;
  /** Events still unsent when `close()` reached its timeout (the sidecar gone or refusing). */
  abandoned: number;
  /**
   * Why the last send that did not go through failed (`HTTP 401: …`, `connect ECONNREFUSED …`),
   * also after later sends went through; `undefined` when none failed.
   */
  lastError: string | undefined;
}

/** The handle {@link forwardEvents} returns. */
export interface Forwarder {
  /** Resolves once every event forwarded so far was sent, or `false` after `timeoutMs`. */
  flush(timeoutMs?: number): Promise<boolean>;
  /**
   * Stops forwarding, sends what is queued and releases the file. Resolves within `timeoutMs`
   * (default 30 s) whatever the sidecar does: `true` when everything was sent, else `false`,
   * with the request in flight cut and what was left counted in `stats().abandoned`.
   */
  close(timeoutMs?: number): Promise<boolean>;
  stats(): ForwarderStats;
}

/**
 * The agent side of sidecar mode: a bus subscriber that batches every event as an NDJSON
 * envelope and sends it to a sidecar over HTTP or appends it to a journal file. It never blocks
 * or throws into the bus: the handler only encodes and queues; sending happens on a timer; a full
 * queue drops and counts; failed sends are retried with exponential backoff (honouring
 * `Retry-After`).
 */
export function forwardEvents(bus: EventBus, options: ForwardOptions): Forwarder {
  if ((options.url === undefined) === (options.file === undefined)) {
    throw new TypeError('forwardEvents needs exactly one of options.url or options.file');
  }
  if (options.url !== undefined) checkSidecarUrl(options.url);
  return new EventForwarder(bus, options);
}

class EventForwarder implements Forwarder {
  readonly #unsubscribe: () => void;
  readonly #endpoint: string | undefined;
  readonly #file: string | undefined;
  readonly #token: string | undefined;
  readonly #batchSize: number;
  readonly #flushIntervalMs: number;
  readonly #maxQueueSize: number;
  readonly #compress: boolean;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #requestTimeoutMs: number;
  #queue: string[] = [];
  #inFlight = 0;
  #sending = false;
  #timer: NodeJS.Timeout | undefined;
  #backoffMs: number;
  /** No send before this time (ms): a failed send backs off even while events keep coming. */
  #retryAt = 0;
  #handle: Promise<FileHandle> | undefined;
  #waiters: (() => void)[] = [];
  #closed: Promise<boolean> | undefined;
  #reportedDrop = false;
  /** Aborts the request in flight when `close()` gives up. */
  readonly #abandon = new AbortController();
  readonly #stats = { sent: 0, dropped: 0, refused: 0, retries: 0, abandoned: 0 };
  #lastError: string | undefined;

  constructor(bus: EventBus, options: ForwardOptions) {
    this.#endpoint =
      options.url === undefined ? undefined : `${options.url.replace(/\/+$/, '')}/v1/events`;
    this.#file = options.file;
    this.#token = options.token ?? process.env.TOOLTRACE_TOKEN;
    this.#batchSize = options.batchSize ?? 512;
    this.#flushIntervalMs = options.flushIntervalMs ?? 100;
    this.#maxQueueSize = options.maxQueueSize ?? 20_000;
    this.#compress = options.compress ?? false;
    this.#initialBackoffMs = options.initialBackoffMs ?? 250;
    this.#maxBackoffMs = options.maxBackoffMs ?? 5_000;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#backoffMs = this.#initialBackoffMs;
    const filter = options.filter;
    // Last in line: the forwarder should see an event after the agent's own handlers ran.
    this.#unsubscribe = bus.subscribeAll(
      (event) => {
        if (filter !== undefined && !filter(event)) return;
        this.#enqueue(event);
      },
      { priority: Number.MAX_SAFE_INTEGER, source: 'tooltrace.forwarder' },
    );
  }

  stats(): ForwarderStats {
    return {
      ...this.#stats,
      queued: this.#queue.length + this.#inFlight,
      lastError: this.#lastError,
    };
  }

  flush(timeoutMs = 30_000): Promise<boolean> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#waiters.push(done);
      this.#send();
    });
  }

  close(timeoutMs = 30_000): Promise<boolean> {
    this.#closed ??= (async () => {
      this.#unsubscribe();
      const flushed = await this.flush(timeoutMs);
      if (!flushed) {
        // The sidecar is gone or refusing: stop retrying, cut the request in flight, count.
        this.#stats.abandoned += this.#queue.length + this.#inFlight;
        this.#queue = [];
        this.#inFlight = 0;
        this.#abandon.abort();
      }
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      const handle = this.#handle;
      this.#handle = undefined;
      if (handle !== undefined) await (await handle).close();
      return flushed;
    })();
    return this.#closed;
  }

  #enqueue(event: BusEvent): void {
    if (this.#queue.length + this.#inFlight >= this.#maxQueueSize) {
      this.#drop(`forwarder queue full (${this.#maxQueueSize} events)`);
      return;
    }
    let line: string;
    try {
      line = encodeEnvelope(event);
    } catch (error) {
      // A payload JSON cannot hold (a bigint, a cycle): the agent must not hear about it.
      this.#drop(`event ${event.type} cannot be encoded: ${String(error)}`);
      return;
    }
    this.#queue.push(line);
    if (this.#queue.length >= this.#batchSize) this.#send();
    else this.#schedule(this.#flushIntervalMs);
  }

  #drop(why: string): void {
    this.#stats.dropped += 1;
    if (!this.#reportedDrop) {
      this.#reportedDrop = true;
      diag.warn(`tooltrace: ${why}; dropping events, see stats().dropped`);
    }
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#send();
    }, delayMs);
    this.#timer.unref();
  }

  #send(): void {
    if (this.#sending || this.#queue.length === 0 || this.#abandon.signal.aborted) return;
    const wait = this.#retryAt - Date.now();
    if (wait > 0) {
      this.#schedule(wait);
      return;
    }
    this.#sending = true;
    const batch = this.#queue.splice(0, this.#batchSize);
    this.#inFlight = batch.length;
    const body = `${batch.join('\n')}\n`;
    void this.#deliver(body, batch.length).then((outcome) => {
      this.#sending = false;
      this.#inFlight = 0;
      if (this.#abandon.signal.aborted) return;
      if (outcome.kind === 'retryable') {
        this.#stats.retries += 1;
        this.#lastError = outcome.message;
        // A sidecar whose queue filled mid-body took the lines before `unread`: resend the rest.
        const unread = outcome.unread ?? batch.length;
        this.#stats.sent += batch.length - unread;
        this.#queue = batch.slice(batch.length - unread).concat(this.#queue);
        const delay = outcome.retryAfterMs ?? this.#backoffMs;
        this.#backoffMs = Math.min(this.#backoffMs * 2, this.#maxBackoffMs);
        this.#retryAt = Date.now() + delay;
        this.#schedule(delay);
        return;
      }
      this.#backoffMs = this.#initialBackoffMs;
      this.#retryAt = 0;
      if (outcome.kind === 'success') {
        this.#stats.sent += batch.length;
      } else {
        this.#stats.refused += batch.length;
        this.#lastError = outcome.message;
        diag.error(`tooltrace: the sidecar refused ${batch.length} events: ${outcome.message}`);
      }
      if (this.#queue.length > 0) this.#send();
      else {
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const waiter of waiters) waiter();
      }
    });
  }

  async #deliver(body: string, lines: number): Promise<SendOutcome> {
    try {
      if (this.#file !== undefined) {
        this.#handle ??= open(this.#file, 'a');
        await (await this.#handle).appendFile(body);
        return { kind: 'success' };
      }
      const headers: Record<string, string> = {
        'content-type': 'application/x-ndjson',
        'user-agent': `tooltrace/${VERSION}`,
      };
      if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
      let payload: string | Buffer = body;
      if (this.#compress) {
        payload = await gzip(body);
        headers['content-encoding'] = 'gzip';
      }
      const response = await fetch(this.#endpoint!, {
        method: 'POST',
        headers,
        body: payload,
        signal: AbortSignal.any([
          AbortSignal.timeout(this.#requestTimeoutMs),
          this.#abandon.signal,
        ]),
      });
      const answer = await response.text().catch(() => '');
      if (response.ok) return { kind: 'success' };
      const said = parseAnswer(answer);
      const message = `HTTP ${response.status}${said.error === undefined ? '' : `: ${said.error}`}`;
      if (response.status === 429 || response.status >= 500) {
        const unread = said.unread;
        return {
          kind: 'retryable',
          retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
          message,
          ...(unread !== undefined && unread < lines ? { unread } : {}),
        };
      }
      return { kind: 'refused', message };
    } catch (error) {
      if (this.#file !== undefined) this.#handle = undefined;
      return { kind: 'retryable', retryAfterMs: undefined, message: errorMessage(error) };
    }
  }
}

type SendOutcome =
  | { kind: 'success' }
  | { kind: 'retryable'; retryAfterMs: number | undefined; message: string; unread?: number }
  | { kind: 'refused'; message: string };

/** The sidecar's JSON answer: its `error` message, and how many lines it left `unread`. */
function parseAnswer(text: string): { error?: string; unread?: number } {
  try {
    const value = JSON.parse(text) as { error?: unknown; unread?: unknown };
    return {
      ...(typeof value.error === 'string' ? { error: value.error } : {}),
      ...(Number.isSafeInteger(value.unread) && (value.unread as number) >= 0
        ? { unread: value.unread as number }
        : {}),
    };
  } catch {
    return {};
  }
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds from now. */
function retryAfterMs(header: string | null): number | undefined {
  const text = header?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text) > 0 ? Number(text) * 1000 : undefined;
  if (!/^[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** A fetch failure names its cause (`connect ECONNREFUSED …`) only in `cause`. */
function errorMessage(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const text = error instanceof Error ? error.message : String(error);
  return cause instanceof Error ? `${text}: ${cause.message}` : text;
}

/** A sidecar's base URL, refused at once when it cannot be one (every send would fail). */
export function checkSidecarUrl(url: string): void {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new TypeError(`options.url must be an http:// or https:// URL, got '${url}'`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // fetch refuses them, and they would end up in logs: the sidecar's token goes in `token`.
    throw new TypeError(
      'options.url must not hold a user name or password: give the token as options.token',
    );
  }
}
