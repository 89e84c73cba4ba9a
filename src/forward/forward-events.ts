import { counted } from '../errors/index.js';
import { open, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { BusEvent, EventBus } from '../bus/index.js';
import { USER_AGENT } from '../user-agent.js';
import {
  DEFAULT_MAX_LINE_BYTES,
  encodeEnvelope,
  parseRetryAfter,
  RetryBackoff,
} from '../wire/index.js';
import { ForwardError, type ForwardErrorKind } from './forward-error.js';
import type { ForwardOptions, Forwarder, ForwarderStats } from './forward-options.js';
import {
  errorMessage,
  parseAnswer,
  LIBRARY_WORDING,
  refusalHint,
  type RefusalWording,
  type SendOutcome,
} from './sidecar-answer.js';

const gzip = promisify(gzipCallback);

/**
 * The agent side of sidecar mode: a bus subscriber that batches every event as an NDJSON
 * envelope and sends it to a sidecar over HTTP or appends it to a journal file. It never blocks
 * or throws into the bus: the handler only encodes and queues; sending happens on a timer; a full
 * queue drops and counts; failed sends are retried with exponential backoff (honouring
 * `Retry-After`). What goes wrong is counted in `stats()` and told once per kind through
 * `options.onError` (standard error by default).
 */
export function forwardEvents(bus: EventBus, options: ForwardOptions): Forwarder {
  return forwardEventsWorded(bus, options, LIBRARY_WORDING);
}

/**
 * {@link forwardEvents} for a program that forwards on its user's behalf: a refusal's hint names
 * where that user sets the token and the URL (`wording`), not the library's options.
 */
export function forwardEventsWorded(
  bus: EventBus,
  options: ForwardOptions,
  wording: RefusalWording,
): Forwarder {
  if ((options.url === undefined) === (options.file === undefined)) {
    throw new TypeError('forwardEvents needs exactly one of options.url or options.file');
  }
  if (options.url !== undefined) checkSidecarUrl(options.url);
  return new EventForwarder(bus, options, wording);
}

class EventForwarder implements Forwarder {
  readonly #unsubscribe: () => void;
  readonly #endpoint: string | undefined;
  readonly #file: string | undefined;
  readonly #token: string | undefined;
  readonly #batchSize: number;
  readonly #flushIntervalMs: number;
  readonly #maxQueueSize: number;
  readonly #maxQueueBytes: number;
  readonly #maxLineBytes: number;
  /** Bytes of the lines queued and in flight. */
  #heldBytes = 0;
  readonly #compress: boolean;
  readonly #requestTimeoutMs: number;
  #queue: string[] = [];
  #inFlight = 0;
  #sending = false;
  #timer: NodeJS.Timeout | undefined;
  /** A failed send backs off even while events keep coming. */
  readonly #backoff: RetryBackoff;
  #handle: Promise<FileHandle> | undefined;
  #waiters: (() => void)[] = [];
  #closed: Promise<boolean> | undefined;
  readonly #onError: (error: ForwardError) => void;
  /** Kinds (and statuses) told already: each once, however often it happens. */
  readonly #told = new Set<string>();
  /** Aborts the request in flight when `close()` gives up. */
  readonly #abandon = new AbortController();
  readonly #stats = { sent: 0, dropped: 0, refused: 0, retries: 0, abandoned: 0 };
  #lastError: string | undefined;

  readonly #wording: RefusalWording;

  constructor(bus: EventBus, options: ForwardOptions, wording: RefusalWording) {
    this.#wording = wording;
    this.#endpoint =
      options.url === undefined ? undefined : `${options.url.replace(/\/+$/, '')}/v1/events`;
    this.#file = options.file;
    this.#token = options.token ?? process.env.TOOLTRACE_TOKEN;
    this.#batchSize = options.batchSize ?? 512;
    this.#flushIntervalMs = options.flushIntervalMs ?? 100;
    this.#maxQueueSize = options.maxQueueSize ?? 20_000;
    this.#maxQueueBytes = options.maxQueueBytes ?? 64 * 1024 * 1024;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.#compress = options.compress ?? false;
    this.#backoff = new RetryBackoff(
      options.initialBackoffMs ?? 250,
      options.maxBackoffMs ?? 5_000,
    );
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#onError = options.onError ?? writeToStderr;
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

  async flush(timeoutMs = 30_000): Promise<boolean> {
    return (await this.#drain(timeoutMs)) && this.#allTaken();
  }

  close(timeoutMs = 30_000): Promise<boolean> {
    this.#closed ??= (async () => {
      this.#unsubscribe();
      const drained = await this.#drain(timeoutMs);
      if (!drained) {
        // The sidecar is gone or refusing: stop retrying, cut the request in flight, count.
        const left = this.#queue.length + this.#inFlight;
        this.#stats.abandoned += left;
        this.#queue = [];
        this.#inFlight = 0;
        this.#heldBytes = 0;
        this.#abandon.abort();
        const { sent, refused, dropped, abandoned } = this.#stats;
        this.#tell(
          'gave-up',
          undefined,
          left,
          `close() gave up after ${timeoutMs} ms: ${counted(left, 'event')} not delivered (sent ${sent}, refused ${refused}, dropped ${dropped}, abandoned ${abandoned})${this.#lastError === undefined ? '' : `; last error: ${this.#lastError}`}`,
        );
      }
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      const handle = this.#handle;
      this.#handle = undefined;
      if (handle !== undefined) await (await handle).close();
      return drained && this.#allTaken();
    })();
    return this.#closed;
  }

  /** Whether every event so far was taken: none refused, dropped or abandoned. */
  #allTaken(): boolean {
    const { refused, dropped, abandoned } = this.#stats;
    return refused === 0 && dropped === 0 && abandoned === 0;
  }

  /**
   * Resolves `true` once nothing is queued or in flight, `false` after `timeoutMs`. Its timer is
   * not unref'd: a caller awaits it, and a script whose only pending work is the forwarder
   * must get its answer rather than end with an unsettled promise.
   */
  #drain(timeoutMs: number): Promise<boolean> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#waiters.push(done);
      this.#send();
    });
  }

  #enqueue(event: BusEvent): void {
    if (this.#queue.length + this.#inFlight >= this.#maxQueueSize) {
      this.#drop(`forwarder queue full (${counted(this.#maxQueueSize, 'event')})`);
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
    const bytes = Buffer.byteLength(line);
    if (bytes > this.#maxLineBytes) {
      this.#drop(`event ${event.type} is ${bytes} bytes encoded, over ${this.#maxLineBytes}`);
      return;
    }
    if (this.#heldBytes + bytes > this.#maxQueueBytes) {
      this.#drop(`forwarder queue full (${this.#maxQueueBytes} bytes)`);
      return;
    }
    this.#heldBytes += bytes;
    this.#queue.push(line);
    if (this.#queue.length >= this.#batchSize) this.#send();
    else this.#schedule(this.#flushIntervalMs);
  }

  /** Lines that left for good (taken, refused): their bytes no longer count. */
  #release(lines: readonly string[]): void {
    for (const line of lines) this.#heldBytes -= Buffer.byteLength(line);
  }

  #drop(why: string): void {
    this.#stats.dropped += 1;
    this.#tell('dropped', undefined, 1, `${why}; dropping events, see stats().dropped`);
  }

  /** Tells `onError` about a kind of problem (per status) the first time it happens. */
  #tell(kind: ForwardErrorKind, status: number | undefined, events: number, message: string): void {
    const key = `${kind} ${status ?? ''}`;
    if (this.#told.has(key)) return;
    this.#told.add(key);
    try {
      this.#onError(
        new ForwardError(message, { kind, events, ...(status === undefined ? {} : { status }) }),
      );
    } catch {
      // A reporting hook that throws must not reach the bus or stop the sends.
    }
  }

  /** Where events go, as the messages name it. */
  get #destination(): string {
    return this.#endpoint ?? this.#file ?? '';
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
    const wait = this.#backoff.waitMs();
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
        this.#tellRetry(outcome.status, batch.length, outcome.message);
        // A sidecar whose queue filled mid-body took the lines before `unread`: resend the rest.
        const unread = outcome.unread ?? batch.length;
        this.#stats.sent += batch.length - unread;
        this.#release(batch.slice(0, batch.length - unread));
        this.#queue = batch.slice(batch.length - unread).concat(this.#queue);
        this.#schedule(this.#backoff.failed(outcome.retryAfterMs));
        return;
      }
      this.#backoff.succeeded();
      this.#release(batch);
      if (outcome.kind === 'success') {
        this.#stats.sent += batch.length;
      } else {
        this.#stats.refused += batch.length;
        this.#lastError = outcome.message;
        this.#tell(
          'refused',
          outcome.status,
          batch.length,
          `the sidecar at ${this.#destination} refused ${counted(batch.length, 'event')}: ${outcome.message}${refusalHint(outcome.status, this.#wording)}`,
        );
      }
      if (this.#queue.length > 0) this.#send();
      else {
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const waiter of waiters) waiter();
      }
    });
  }

  /**
   * A failed send that is retried: no answer (the sidecar down, the address wrong) or a 5xx is
   * told; a 429 is not, since it is the sidecar pacing its clients as it should.
   */
  #tellRetry(status: number | undefined, events: number, message: string): void {
    if (status === 429) return;
    if (status === undefined) {
      const what = this.#file === undefined ? 'cannot reach the sidecar at' : 'cannot write to';
      this.#tell(
        'unreachable',
        undefined,
        events,
        `${what} ${this.#destination}: ${message}; retrying`,
      );
    } else {
      this.#tell(
        'unavailable',
        status,
        events,
        `the sidecar at ${this.#destination} answered ${message}; retrying`,
      );
    }
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
        'user-agent': USER_AGENT,
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
          retryAfterMs: parseRetryAfter(response.headers.get('retry-after') ?? undefined),
          message,
          status: response.status,
          ...(unread !== undefined && unread < lines ? { unread } : {}),
        };
      }
      return { kind: 'refused', message, status: response.status };
    } catch (error) {
      if (this.#file !== undefined) this.#handle = undefined;
      return { kind: 'retryable', retryAfterMs: undefined, message: errorMessage(error) };
    }
  }
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

/** The default `onError`: one line on standard error. */
function writeToStderr(error: ForwardError): void {
  process.stderr.write(`tooltrace forwarder: ${error.message}\n`);
}
