import { diag } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type {
  ReadableSpan,
  Span,
  SpanExporter,
  SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

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
   * First wait after a failed export; doubled per failure up to `maxBackoffMs`. A failure
   * carrying `retryAfterMs` (the endpoint's `Retry-After`) waits at least that long, up to
   * `maxBackoffMs`.
   * @default 500
   */
  initialBackoffMs?: number;
  /** @default 10000 */
  maxBackoffMs?: number;
  /** Called when a span starts (the sidecar pins its checkpoint there). */
  onStart?: (span: Span) => void;
  /** Called after each batch the exporter accepted. */
  onExported?: (spans: readonly ReadableSpan[], latencyMs: number) => void;
  /** Called after each failed export attempt (the batch is kept and retried). */
  onFailed?: (error: Error | undefined, spans: number) => void;
  /**
   * Called for a span the endpoint refused for good on its own (HTTP 400 or 413 for a batch of
   * one): the only span this processor ever gives up on, since retrying cannot help it.
   */
  onRefused?: (span: ReadableSpan, error: Error | undefined) => void;
}

/** Counters a {@link ReliableSpanProcessor} keeps. */
export interface ReliableSpanProcessorStats {
  queued: number;
  inFlight: number;
  exported: number;
  failedAttempts: number;
  refused: number;
}

/** Statuses that say "this request can never succeed", as opposed to "not now". */
const REFUSED_STATUSES = new Set([400, 413]);

/**
 * A span processor that never drops an ended span: batches are exported with a bounded number
 * in flight, a failed batch is kept and retried with exponential backoff until it goes through,
 * and `forceFlush()` works the backlog down batch by batch instead of firing it all at once.
 * The stock BatchSpanProcessor drops spans past its queue, does not retry a failed batch and
 * fails most of a large backlog on flush (see DESIGN.md); a sidecar that promises "nothing
 * lost" cannot use it. Memory is bounded by pushing back on intake (see {@link full}). A batch
 * the endpoint refuses as malformed or too large is split in halves rather than retried as is, so
 * one bad span cannot block the queue forever; only that span is given up on, and reported.
 */
export class ReliableSpanProcessor implements SpanProcessor {
  readonly #exporter: SpanExporter;
  readonly #batchSize: number;
  readonly #scheduleDelayMs: number;
  readonly #maxQueueSpans: number;
  readonly #maxConcurrent: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #options: ReliableSpanProcessorOptions;
  #queue: ReadableSpan[] = [];
  /** Batches that failed, kept whole (or halved, when refused) and sent before the queue. */
  #retries: ReadableSpan[][] = [];
  #retrySpans = 0;
  #inFlight = 0;
  #inFlightSpans = 0;
  #exported = 0;
  #failedAttempts = 0;
  #refused = 0;
  #backoffMs: number;
  #retryAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #idleWaiters: (() => void)[] = [];
  #shutdown: Promise<void> | undefined;

  constructor(exporter: SpanExporter, options: ReliableSpanProcessorOptions = {}) {
    this.#exporter = exporter;
    this.#options = options;
    this.#batchSize = options.batchSize ?? 512;
    this.#scheduleDelayMs = options.scheduleDelayMs ?? 200;
    this.#maxQueueSpans = options.maxQueueSpans ?? 50_000;
    this.#maxConcurrent = options.maxConcurrentExports ?? 2;
    this.#initialBackoffMs = options.initialBackoffMs ?? 500;
    this.#maxBackoffMs = options.maxBackoffMs ?? 10_000;
    this.#backoffMs = this.#initialBackoffMs;
  }

  /** True while the spans waiting for export exceed the memory budget. */
  get full(): boolean {
    return this.pending >= this.#maxQueueSpans;
  }

  /** Spans waiting for export or in flight. */
  get pending(): number {
    return this.#queue.length + this.#retrySpans + this.#inFlightSpans;
  }

  stats(): ReliableSpanProcessorStats {
    return {
      queued: this.#queue.length + this.#retrySpans,
      inFlight: this.#inFlightSpans,
      exported: this.#exported,
      failedAttempts: this.#failedAttempts,
      refused: this.#refused,
    };
  }

  onStart(span: Span): void {
    this.#options.onStart?.(span);
  }

  onEnd(span: ReadableSpan): void {
    this.#queue.push(span);
    if (this.#queue.length >= this.#batchSize) this.#pump(false);
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

  /** Flushes (within `timeoutMs`), then shuts the exporter down. Safe to call twice. */
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
      this.#timer = undefined;
      await this.#exporter.shutdown();
    })();
    return this.#shutdown;
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined || this.#shutdown !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump(true);
    }, delayMs);
    this.#timer.unref();
  }

  /** Starts exports while there is room in flight; `partial` allows a batch below full size. */
  #pump(partial: boolean): void {
    const now = Date.now();
    if (now < this.#retryAt) {
      this.#schedule(this.#retryAt - now);
      return;
    }
    const flushing = partial || this.#idleWaiters.length > 0;
    while (this.#inFlight < this.#maxConcurrent && this.#retries.length > 0) {
      const batch = this.#retries.shift()!;
      this.#retrySpans -= batch.length;
      this.#send(batch);
    }
    while (this.#inFlight < this.#maxConcurrent && this.#queue.length > 0) {
      if (!flushing && this.#queue.length < this.#batchSize) break;
      this.#send(this.#queue.splice(0, this.#batchSize));
    }
    // A partial batch left behind goes out after the schedule delay, as a fuller one.
    const waiting = this.#queue.length + this.#retrySpans;
    if (waiting > 0 && this.#inFlight < this.#maxConcurrent) {
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
        this.#succeeded(batch, performance.now() - started);
      } else {
        this.#failed(batch, result.error);
      }
      if (this.pending === 0) {
        const waiters = this.#idleWaiters;
        this.#idleWaiters = [];
        for (const waiter of waiters) waiter();
      } else {
        this.#pump(false);
      }
    };
    try {
      this.#exporter.export(batch, done);
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  #succeeded(batch: ReadableSpan[], latencyMs: number): void {
    this.#exported += batch.length;
    this.#backoffMs = this.#initialBackoffMs;
    this.#retryAt = 0;
    this.#call(() => this.#options.onExported?.(batch, latencyMs));
  }

  #failed(batch: ReadableSpan[], error: Error | undefined): void {
    this.#failedAttempts += 1;
    this.#call(() => this.#options.onFailed?.(error, batch.length));
    if (isRefusal(error)) {
      if (batch.length === 1) {
        this.#refused += 1;
        this.#call(() => this.#options.onRefused?.(batch[0]!, error));
        return;
      }
      // Halves go back in front, in order, and out again at once: this is no outage.
      const half = Math.ceil(batch.length / 2);
      this.#requeue(batch.slice(0, half), batch.slice(half));
      return;
    }
    // Put the batch back in front, whole: it is retried before newer spans, never dropped.
    this.#requeue(batch);
    const retryAfterMs = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
    const waitMs = Math.max(
      this.#backoffMs,
      typeof retryAfterMs === 'number' ? Math.min(retryAfterMs, this.#maxBackoffMs) : 0,
    );
    this.#retryAt = Math.max(this.#retryAt, Date.now() + waitMs);
    this.#backoffMs = Math.min(this.#backoffMs * 2, this.#maxBackoffMs);
  }

  #requeue(...batches: ReadableSpan[][]): void {
    this.#retries.unshift(...batches);
    for (const batch of batches) this.#retrySpans += batch.length;
  }

  #call(hook: () => void): void {
    try {
      hook();
    } catch (error) {
      diag.error('tooltrace: a ReliableSpanProcessor hook failed', error);
    }
  }
}

function isRefusal(error: Error | undefined): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' && REFUSED_STATUSES.has(code);
}
