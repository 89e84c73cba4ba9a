/** Scales every pause of the demo: 1 for a watchable run, small for tests. */
export interface DemoPace {
  /** Waits `ms` scaled by the pace, or rejects when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** A duration in milliseconds scaled by the pace. */
  scale(ms: number): number;
}

/** A pace that multiplies every pause by `factor`. */
export function demoPace(factor: number): DemoPace {
  const scale = (ms: number): number => Math.max(1, Math.round(ms * factor));
  return {
    scale,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) {
          reject(signal.reason as Error);
          return;
        }
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, scale(ms));
        const onAbort = (): void => {
          clearTimeout(timer);
          reject(signal.reason as Error);
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }),
  };
}
