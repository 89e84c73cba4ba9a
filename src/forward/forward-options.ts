import type { BusEvent } from '../bus/index.js';
import type { ForwardError } from './forward-error.js';

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
   * Bytes of encoded lines held at most (queued and in flight). Past it new events are dropped
   * and counted, as past `maxQueueSize`: 20,000 events of 20 MB must not become 400 GB.
   * @default 64 MiB
   */
  maxQueueBytes?: number;
  /**
   * The longest line forwarded, in bytes; a longer event is dropped and counted, since a sidecar
   * refuses lines over its own limit (1 MiB by default) anyway.
   * @default 1 MiB
   */
  maxLineBytes?: number;
  /**
   * Compress request bodies with gzip.
   * @default false
   */
  compress?: boolean;
  /**
   * First retry delay after a failed send, doubled per failure up to `maxBackoffMs`, each delay
   * drawn between half and all of it (jitter); a longer `Retry-After` from the sidecar lengthens
   * it. @default 250
   */
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
  /**
   * Hears what goes wrong, each kind (and HTTP status) once: the sidecar unreachable or
   * answering 5xx (events are retried), refusing events (401, 404, 413: dropped for good),
   * events dropped, and `close()` giving up with events unsent. Route it elsewhere with, for
   * example, `onError: (error) => diag.warn(error.message)`. It must not throw (what it throws
   * is ignored).
   * @default writes `tooltrace forwarder: <message>` to standard error
   */
  onError?: (error: ForwardError) => void;
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
  /**
   * Sends what is queued. Resolves `true` once every event forwarded so far was taken by the
   * sidecar (or the file); `false` when some were refused or dropped, or after `timeoutMs`
   * (default 30 s), which keeps the process alive until then.
   */
  flush(timeoutMs?: number): Promise<boolean>;
  /**
   * Stops forwarding, sends what is queued and releases the file. Resolves within `timeoutMs`
   * (default 30 s) whatever the sidecar does, keeping the process alive until then: `true` only
   * when every event was taken, else `false`, with the request in flight cut, what was left
   * counted in `stats().abandoned` and reported once through `onError`.
   */
  close(timeoutMs?: number): Promise<boolean>;
  stats(): ForwarderStats;
}
