/** Why a wait ended without enough items. */
export type WaitFailure = 'timeout' | 'closed';

interface Waiter {
  check(): void;
  fail(reason: WaitFailure): void;
}

/**
 * Promises that resolve once a growing list holds at least some number of items, each with its
 * own timeout (an `unref()`ed timer, so a forgotten wait never holds the process open).
 * {@link CountWaiters.notify} re-checks them after the lists grew.
 */
export class CountWaiters {
  readonly #waiters = new Set<Waiter>();

  /**
   * Resolves with a copy of `items()` once it holds `count` items. Rejects with
   * `failure(reason)` after `timeoutMs`, or when {@link CountWaiters.failAll} runs.
   */
  wait<T>(
    items: () => readonly T[],
    count: number,
    timeoutMs: number,
    failure: (reason: WaitFailure) => Error,
  ): Promise<T[]> {
    if (items().length >= count) return Promise.resolve([...items()]);
    return new Promise<T[]>((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
      };
      const waiter: Waiter = {
        check: () => {
          if (items().length < count) return;
          settle();
          resolve([...items()]);
        },
        fail: (reason) => {
          settle();
          reject(failure(reason));
        },
      };
      const timer = setTimeout(() => waiter.fail('timeout'), timeoutMs);
      timer.unref();
      this.#waiters.add(waiter);
    });
  }

  /** Resolves the waits whose list is now long enough. */
  notify(): void {
    for (const waiter of [...this.#waiters]) waiter.check();
  }

  /** Rejects every pending wait with `reason`. */
  failAll(reason: WaitFailure): void {
    for (const waiter of [...this.#waiters]) waiter.fail(reason);
  }
}
