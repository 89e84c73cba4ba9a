import { diag } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** Options for {@link ReliableSpanProcessor}. */
export interface ReliableSpanProcessorOptions {
  /**
   * Spans per export request.
   * @default 512
   */
  batchSize?: number;
  /**
   * How long an ended span may wait for a batch to fill before it is exported anyway.
   * @default 200
   */
  scheduleDelayMs?: number;
  /**
   * The memory budget, in spans waiting for export. Past it {@link ReliableSpanProcessor.full}
   * turns true and intake must push back; spans are still never dropped.
   * @default 50000
   */
  maxQueueSpans?: number;
  /**
   * Export requests in flight at once.
   * @default 2
   */
  maxConcurrentExports?: number;
  /**
   * First wait after a failed export; doubled per failure up to `maxBackoffMs`.
   * @default 500
   */
  initialBackoffMs?: number;
  /** @default 10000 */
  maxBackoffMs?: number;
  /** Called after each batch the exporter accepted. */
  onExported?: (spans: readonly ReadableSpan[], latencyMs: number) => void;
  /** Called after each failed export attempt (the batch is kept and retried). */
  onFailed?: (error: Error | undefined, spans: number) => void;
}

/** Counters a {@link ReliableSpanProcessor} keeps. */
export interface ReliableSpanProcessorStats {
  queued: number;
  inFlight: number;
  exported: number;
  failedAttempts: number;
}

/**
 * A span processor that never drops an ended span: batches are exported with a bounded number
 * in flight, a failed batch is kept and retried with exponential backoff until it goes through,
 * and `forceFlush()` works the backlog down batch by batch instead of firing it all at once.
 * The stock BatchSpanProcessor drops spans past its queue, does not retry a failed batch and
 * fails most of a large backlog on flush (see DESIGN.md); a sidecar that promises "nothing
 * lost" cannot use it. Memory is bounded by pushing back on intake (see {@link full}).
 */
export class ReliableSpanProcessor implements SpanProcessor {
  readonly #exporter: SpanExporter;
  readonly #batchSize: number;
  readonly #scheduleDelayMs: number;
  readonly #maxQueueSpans: number;
  readonly #maxConcurrent: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #onExported: ReliableSpanProcessorOptions['onExported'];
  readonly #onFailed: ReliableSpanProcessorOptions['onFailed'];
  #queue: ReadableSpan[] = [];
  #inFlight = 0;
  #inFlightSpans = 0;
  #exported = 0;
  #failedAttempts = 0;
  #backoffMs: number;
  #retryAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #idleWaiters: (() => void)[] = [];
  #shutdown: Promise<void> | undefined;

  constructor(exporter: SpanExporter, options: ReliableSpanProcessorOptions = {}) {
    this.#exporter = exporter;
    this.#batchSize = options.batchSize ?? 512;
    this.#scheduleDelayMs = options.scheduleDelayMs ?? 200;
    this.#maxQueueSpans = options.maxQueueSpans ?? 50_000;
    this.#maxConcurrent = options.maxConcurrentExports ?? 2;
    this.#initialBackoffMs = options.initialBackoffMs ?? 500;
    this.#maxBackoffMs = options.maxBackoffMs ?? 10_000;
    this.#backoffMs = this.#initialBackoffMs;
    this.#onExported = options.onExported;
    this.#onFailed = options.onFailed;
  }

  /** True while the spans waiting for export exceed the memory budget. */
  get full(): boolean {
    return this.#queue.length + this.#inFlightSpans >= this.#maxQueueSpans;
  }

  /** Spans waiting for export or in flight. */
  get pending(): number {
    return this.#queue.length + this.#inFlightSpans;
  }

  stats(): ReliableSpanProcessorStats {
    return {
      queued: this.#queue.length,
      inFlight: this.#inFlightSpans,
      exported: this.#exported,
      failedAttempts: this.#failedAttempts,
    };
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    this.#queue.push(span);
    if (this.#queue.length >= this.#batchSize) this.#pump();
    else this.#schedule(this.#scheduleDelayMs);
  }

  /**
   * Resolves once every span ended so far has been exported. With the exporter down it keeps
   * retrying: callers that need a deadline race it against a timer.
   */
  forceFlush(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    const idle = new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#pump(true);
    return idle;
  }

  /** Flushes, then shuts the exporter down. Safe to call twice. */
  shutdown(timeoutMs = 30_000): Promise<void> {
    this.#shutdown ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      });
      await Promise.race([this.forceFlush(), deadline]);
      clearTimeout(timer);
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      await this.#exporter.shutdown();
    })();
    return this.#shutdown;
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump(true);
    }, delayMs);
    this.#timer.unref();
  }

  /** Starts exports while there is room in flight; `partial` allows a batch below full size. */
  #pump(partial = false): void {
    const now = Date.now();
    if (now < this.#retryAt) {
      this.#schedule(this.#retryAt - now);
      return;
    }
    while (this.#inFlight < this.#maxConcurrent && this.#queue.length > 0) {
      if (!partial && this.#queue.length < this.#batchSize) break;
      const batch = this.#queue.splice(0, this.#batchSize);
      this.#send(batch);
    }
    if (this.#queue.length > 0 && this.#inFlight < this.#maxConcurrent) {
      this.#schedule(this.#scheduleDelayMs);
    }
  }

  #send(batch: ReadableSpan[]): void {
    this.#inFlight += 1;
    this.#inFlightSpans += batch.length;
    const started = performance.now();
    let settled = false;
    const done = (result: ExportResult): void => {
      if (settled) return;
      settled = true;
      this.#inFlight -= 1;
      this.#inFlightSpans -= batch.length;
      if (result.code === ExportResultCode.SUCCESS) {
        this.#exported += batch.length;
        this.#backoffMs = this.#initialBackoffMs;
        try {
          this.#onExported?.(batch, performance.now() - started);
        } catch (error) {
          diag.error('tooltrace: onExported hook failed', error);
        }
      } else {
        this.#failedAttempts += 1;
        // Put the batch back in front: it is retried before newer spans, never dropped.
        this.#queue = batch.concat(this.#queue);
        this.#retryAt = Date.now() + this.#backoffMs;
        this.#backoffMs = Math.min(this.#backoffMs * 2, this.#maxBackoffMs);
        try {
          this.#onFailed?.(result.error, batch.length);
        } catch (error) {
          diag.error('tooltrace: onFailed hook failed', error);
        }
      }
      if (this.pending === 0) {
        const waiters = this.#idleWaiters;
        this.#idleWaiters = [];
        for (const waiter of waiters) waiter();
      } else {
        this.#pump(this.#idleWaiters.length > 0 || this.#queue.length < this.#batchSize);
      }
    };
    try {
      this.#exporter.export(batch, done);
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }
}
