/**
 * A deadline that can be armed late and only ever moves closer: the end-of-input flush starts
 * without one, and a signal arriving during it sets one. {@link race} resolves `true` when the
 * work finished first.
 */
export class Deadline {
  #at = Number.POSITIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #expired = false;
  readonly #waiters = new Set<() => void>();

  /** Expires `timeoutMs` from now, unless it is already set to expire sooner. */
  arm(timeoutMs: number): void {
    if (!Number.isFinite(timeoutMs) || this.#expired) return;
    const at = Date.now() + Math.max(0, timeoutMs);
    if (at >= this.#at) return;
    this.#at = at;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, timeoutMs));
    this.#timer.unref();
  }

  /** When it expires (`Date.now()` milliseconds); `Infinity` while not armed. */
  get at(): number {
    return this.#at;
  }

  /** Whether the deadline has passed. */
  get expired(): boolean {
    return this.#expired;
  }

  /** Resolves `true` once `work` settles, or `false` when the deadline passes first. */
  race(work: Promise<unknown>): Promise<boolean> {
    if (this.#expired) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const expire = (): void => resolve(false);
      this.#waiters.add(expire);
      const finish = (): void => {
        this.#waiters.delete(expire);
        resolve(true);
      };
      work.then(finish, finish);
    });
  }

  /** Stops the timer. */
  cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #expire(): void {
    this.#expired = true;
    this.#timer = undefined;
    for (const waiter of this.#waiters) waiter();
    this.#waiters.clear();
  }
}
