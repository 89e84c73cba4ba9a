import type { ErrorReporter } from './error-reporter.js';

/**
 * The subscriber's one timer and its clock. Every so often it hands the current time to the
 * sweep the subscriber composes (release held events past the reorder window, end tool calls
 * and then agent spans idle past the timeout), and stops once that sweep reports nothing left
 * to watch; the next span or held event starts it again. The timer is unref'd: it never keeps
 * the process alive. The clock is refreshed on events and on every sweep, so the hot path pays
 * no `Date.now()` per stream event.
 */
export class IdleSweep {
  readonly #intervalMs: number;
  readonly #errors: ErrorReporter;
  readonly #sweep: (now: number) => boolean;
  #timer: NodeJS.Timeout | undefined;
  #now = Date.now();
  #stopped = false;

  /**
   * @param sweep Ends what is idle at `now`; returns whether anything is left to watch.
   */
  constructor(intervalMs: number, errors: ErrorReporter, sweep: (now: number) => boolean) {
    this.#intervalMs = intervalMs;
    this.#errors = errors;
    this.#sweep = sweep;
  }

  /** The subscriber clock (ms): the wall clock as last read. */
  get now(): number {
    return this.#now;
  }

  /** Reads the wall clock into the subscriber clock, and returns it. */
  readClock(): number {
    return (this.#now = Date.now());
  }

  /** Makes sure the timer runs (a span opened, an event is held). */
  ensureRunning(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#now = Date.now();
    this.#timer = setInterval(this.#tick, this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops the timer for good: the subscriber is shutting down. */
  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  readonly #tick = (): void => {
    this.#errors.contain('tracer', this.#sweepNow, this);
  };

  readonly #sweepNow = (): void => {
    if (!this.#sweep(this.readClock())) this.#clear();
  };

  #clear(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
