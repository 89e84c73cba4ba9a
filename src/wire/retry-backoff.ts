/**
 * When a failed send may go again: the forwarder's sends to a sidecar and the sidecar's exports
 * both back off with it. Each failure waits the current backoff, drawn between half and all of
 * it (so senders that failed together do not retry together), or longer when the other side
 * said `Retry-After` (up to `maxRetryAfterMs`; a shorter one, `0` from a busy endpoint, never
 * turns retrying into a busy loop); the backoff then doubles up to `maxMs`. A success resets it.
 */
export class RetryBackoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #maxRetryAfterMs: number;
  #backoffMs: number;
  #retryAt = 0;

  constructor(initialMs: number, maxMs: number, maxRetryAfterMs = Number.POSITIVE_INFINITY) {
    this.#initialMs = initialMs;
    this.#maxMs = maxMs;
    this.#maxRetryAfterMs = maxRetryAfterMs;
    this.#backoffMs = initialMs;
  }

  /** Milliseconds until the next attempt may go; `0` when it may go now. */
  waitMs(now = Date.now()): number {
    return Math.max(0, this.#retryAt - now);
  }

  /** Records a failed attempt; returns how long the next one waits. */
  failed(retryAfterMs?: number, now = Date.now()): number {
    const jittered = this.#backoffMs * (0.5 + Math.random() * 0.5);
    const waitMs =
      retryAfterMs === undefined
        ? jittered
        : Math.max(jittered, Math.min(retryAfterMs, this.#maxRetryAfterMs));
    this.#retryAt = Math.max(this.#retryAt, now + waitMs);
    this.#backoffMs = Math.min(this.#backoffMs * 2, this.#maxMs);
    return this.#retryAt - now;
  }

  /** Records a successful attempt: the next failure waits the initial backoff again. */
  succeeded(): void {
    this.#backoffMs = this.#initialMs;
    this.#retryAt = 0;
  }
}
