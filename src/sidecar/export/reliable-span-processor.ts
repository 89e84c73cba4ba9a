import { diag } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { BatchTransport, ExportOutcome } from './export-outcome.js';
import type { SpanBatch } from '../../otlp/index.js';
import { RetryBackoff } from '../../wire/index.js';

/**
 * Encoded bytes at which a batch is sent even with fewer than `batchSize` spans, so that a few
 * large spans (long names, big attributes) do not make a request the collector refuses as too
 * large (413), which would lose every span in it: a request stays within this plus one span. It
 * keeps requests under the 4 MiB a gRPC server takes by default unless one span is over 1 MiB.
 */
const MAX_BATCH_BYTES = 3 * 1024 * 1024;

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
   * The memory budget, in spans waiting for export (encoded: about 2 KB each in protobuf, 4 KB
   * in JSON, for the sidecar's tool calls). Past it {@link ReliableSpanProcessor.full} turns
   * true and intake must push back; spans are still never dropped for it.
   * @default 50000
   */
  maxQueueSpans?: number;
  /**
   * Export requests in flight at once.
   * @default 2
   */
  maxConcurrentExports?: number;
  /**
   * First wait after a retryable failure; doubled per failure up to `maxBackoffMs`, each wait
   * drawn between half and all of it (jitter), so sidecars that failed together do not retry
   * together. A `Retry-After` longer than the wait lengthens it.
   * @default 500
   */
  initialBackoffMs?: number;
  /** @default 10000 */
  maxBackoffMs?: number;
  /**
   * The longest wait a `Retry-After` (or gRPC `RetryInfo`) is obeyed for; an endpoint asking
   * for more waits this long.
   * @default 60000
   */
  maxRetryAfterMs?: number;
  /** Called when a span starts (the sidecar pins its checkpoint there). */
  onStart?: (span: Span) => void;
  /**
   * Called when a span ends, before it is encoded and let go: what it returns (a pin's receipt,
   * say) is kept in the span's place until its batch is done, in the batch's `kept`.
   */
  onEnd?: (span: ReadableSpan) => object | undefined;
  /**
   * Called after each batch the endpoint accepted; `rejected` of its spans it threw away
   * (`partial_success`), which {@link onRejected} reported.
   */
  onExported?: (batch: ExportBatch, latencyMs: number, rejected: number) => void;
  /** Called after each retryable failure (the batch is kept and retried). */
  onFailed?: (reason: string, spans: number) => void;
  /**
   * Called for a batch refused for good (a status OTLP says not to retry): the batch is
   * dropped, counted under `status`.
   */
  onDropped?: (batch: ExportBatch, status: string, reason: string) => void;
  /**
   * Called when an accepted batch came back with a `partial_success` naming rejected spans:
   * they are counted as rejected, not exported. OTLP does not say which, so `batch` is the batch.
   */
  onRejected?: (rejected: number, message: string, batch: ExportBatch) => void;
}

/**
 * What a {@link ReliableSpanProcessor} keeps of a batch in place of its spans, which were encoded
 * as they ended and let go.
 */
export interface ExportBatch {
  /** How many spans it holds (`length`, as the array of spans it stands for). */
  readonly length: number;
  /** The first span's name and span id, to name the batch in a log line. */
  readonly firstSpanName: string;
  readonly firstSpanId: string;
  /** What {@link ReliableSpanProcessorOptions.onEnd} returned for its spans, where it did. */
  readonly kept: readonly object[];
}

/** Counters a {@link ReliableSpanProcessor} keeps. */
export interface ReliableSpanProcessorStats {
  queued: number;
  inFlight: number;
  /** Spans the endpoint accepted and kept. */
  exported: number;
  /** Retryable failures (each batch attempt counts once). */
  failedAttempts: number;
  /** Spans in batches refused for good. */
  dropped: number;
  /** The same, by status (`404`, `PERMISSION_DENIED`, …). */
  droppedByStatus: Record<string, number>;
  /** Spans the endpoint accepted but rejected (`partial_success`). */
  rejected: number;
}

/**
 * A span processor that never drops an ended span while export can still succeed: batches are
 * exported with a bounded number in flight; a batch that fails in a way OTLP says to retry (HTTP
 * 429, 502, 503, 504, network errors; the gRPC codes the specification lists) is kept and
 * retried first, with exponential backoff and jitter, honouring the endpoint's `Retry-After` up
 * to `maxRetryAfterMs`; `forceFlush()` works the backlog down batch by batch. A batch refused
 * for good (any other status) is dropped at once, counted by status: retrying it cannot help,
 * and retrying forever would hold everything behind it. The stock BatchSpanProcessor drops
 * spans past its queue, does not retry a failed batch and fails most of a large backlog on flush
 * (see DESIGN.md); a sidecar that promises "nothing lost" cannot use it. Memory is bounded by
 * pushing back on intake (see {@link full}).
 *
 * Each span is encoded when it ends, into the open batch (see {@link BatchTransport}), and let
 * go: what waits for export, or for a retry, is request bytes, not span object graphs that
 * would survive the young generation's collections and be promoted, only to die old. Closing a
 * batch writes the request around its spans; a retry sends the same bytes.
 */
export class ReliableSpanProcessor implements SpanProcessor {
  readonly #transport: BatchTransport;
  readonly #batchSize: number;
  readonly #scheduleDelayMs: number;
  readonly #maxQueueSpans: number;
  readonly #maxConcurrent: number;
  readonly #backoff: RetryBackoff;
  readonly #options: ReliableSpanProcessorOptions;
  /** The batch ended spans are encoded into, until it is full or sent partial. */
  #open: SpanBatch<unknown> | undefined;
  #openFirstName = '';
  #openFirstId = '';
  #openKept: object[] = [];
  /** Full batches waiting for room in flight. */
  #ready: Batch[] = [];
  #readySpans = 0;
  /** Batches that failed, kept whole (their body too) and sent before the others. */
  #retries: Batch[] = [];
  #retrySpans = 0;
  #inFlight = 0;
  #inFlightSpans = 0;
  #exported = 0;
  #failedAttempts = 0;
  #dropped = 0;
  readonly #droppedByStatus: Record<string, number> = {};
  #rejected = 0;
  #timer: NodeJS.Timeout | undefined;
  #idleWaiters: (() => void)[] = [];
  #shutdown: Promise<void> | undefined;
  /** Shutdown is cutting the requests in flight: what they answer is no failure to report. */
  #cutting = false;

  /**
   * `transport` encodes each span into the open batch as it ends, so that no span object
   * outlives its end, and tells each attempt's outcome as OTLP classifies it.
   */
  constructor(transport: BatchTransport, options: ReliableSpanProcessorOptions = {}) {
    this.#transport = transport;
    this.#options = options;
    this.#batchSize = options.batchSize ?? 512;
    this.#scheduleDelayMs = options.scheduleDelayMs ?? 200;
    this.#maxQueueSpans = options.maxQueueSpans ?? 50_000;
    this.#maxConcurrent = options.maxConcurrentExports ?? 2;
    this.#backoff = new RetryBackoff(
      options.initialBackoffMs ?? 500,
      options.maxBackoffMs ?? 10_000,
      options.maxRetryAfterMs ?? 60_000,
    );
  }

  /** True while the spans waiting for export exceed the memory budget. */
  get full(): boolean {
    return this.pending >= this.#maxQueueSpans;
  }

  /** Spans waiting for export or in flight. */
  get pending(): number {
    return this.#queued + this.#inFlightSpans;
  }

  /** Spans waiting for export, not in flight. */
  get #queued(): number {
    return (this.#open?.size ?? 0) + this.#readySpans + this.#retrySpans;
  }

  stats(): ReliableSpanProcessorStats {
    return {
      queued: this.#queued,
      inFlight: this.#inFlightSpans,
      exported: this.#exported,
      failedAttempts: this.#failedAttempts,
      dropped: this.#dropped,
      droppedByStatus: { ...this.#droppedByStatus },
      rejected: this.#rejected,
    };
  }

  onStart(span: Span): void {
    this.#options.onStart?.(span);
  }

  onEnd(span: ReadableSpan): void {
    let kept: object | undefined;
    try {
      kept = this.#options.onEnd?.(span);
    } catch (error) {
      diag.error('tooltrace: a ReliableSpanProcessor hook failed', error);
    }
    let open: SpanBatch<unknown>;
    try {
      open = this.#open ??= this.#transport.openBatch();
      open.add(span);
    } catch (error) {
      // This span cannot be encoded: it alone is dropped, not the batch.
      const batch = batchOf(undefined, 1, span.name, span.spanContext().spanId, kept);
      this.#drop(batch, 'encoding', `the span could not be encoded: ${String(error)}`);
      return;
    }
    if (open.size === 1) {
      this.#openFirstName = span.name;
      this.#openFirstId = span.spanContext().spanId;
    }
    if (kept !== undefined) this.#openKept.push(kept);
    if (open.size >= this.#batchSize || open.bytes >= MAX_BATCH_BYTES) {
      this.#closeOpen();
      this.#pump(false);
    } else {
      this.#schedule(this.#scheduleDelayMs);
    }
  }

  /** Closes the open batch into the ready ones (false when its request could not be written). */
  #closeOpen(): void {
    const open = this.#open!;
    this.#open = undefined;
    const kept = this.#openKept;
    this.#openKept = [];
    let body: unknown;
    try {
      body = open.close();
    } catch (error) {
      const batch = batchOf(undefined, open.size, this.#openFirstName, this.#openFirstId, kept);
      this.#drop(batch, 'encoding', `the spans could not be encoded: ${String(error)}`);
      return;
    }
    this.#ready.push(batchOf(body, open.size, this.#openFirstName, this.#openFirstId, kept));
    this.#readySpans += open.size;
  }

  /**
   * Resolves once every span ended so far has been exported or given up on. With the endpoint
   * unreachable it keeps retrying: callers that need a deadline race it against a timer.
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
      this.#cutting = true;
      await this.#transport.shutdown();
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
    const waitMs = this.#backoff.waitMs();
    if (waitMs > 0) {
      this.#schedule(waitMs);
      return;
    }
    const flushing = partial || this.#idleWaiters.length > 0;
    while (this.#inFlight < this.#maxConcurrent && this.#retries.length > 0) {
      const batch = this.#retries.shift()!;
      this.#retrySpans -= batch.length;
      this.#send(batch);
    }
    while (this.#inFlight < this.#maxConcurrent) {
      if (this.#ready.length === 0) {
        if (!flushing || this.#open === undefined || this.#open.size === 0) break;
        this.#closeOpen();
        continue;
      }
      const batch = this.#ready.shift()!;
      this.#readySpans -= batch.length;
      this.#send(batch);
    }
    // A partial batch left behind goes out after the schedule delay, as a fuller one.
    if (this.#queued > 0 && this.#inFlight < this.#maxConcurrent) {
      this.#schedule(this.#scheduleDelayMs);
    }
  }

  #send(batch: Batch): void {
    this.#inFlight += 1;
    this.#inFlightSpans += batch.length;
    const started = performance.now();
    const done = (outcome: ExportOutcome): void => {
      this.#inFlight -= 1;
      this.#inFlightSpans -= batch.length;
      if (outcome.kind === 'success') {
        this.#transport.releaseBatch(batch.body);
        this.#succeeded(batch, outcome, performance.now() - started);
      } else if (outcome.kind === 'retryable') {
        this.#retry(batch, outcome.reason, outcome.retryAfterMs);
      } else {
        this.#transport.releaseBatch(batch.body);
        this.#drop(batch, outcome.status, outcome.reason);
      }
      if (this.pending === 0) {
        const waiters = this.#idleWaiters;
        this.#idleWaiters = [];
        for (const waiter of waiters) waiter();
      } else {
        this.#pump(false);
      }
    };
    this.#transport.send(batch.body).then(done, (error: unknown) =>
      done({
        kind: 'retryable',
        status: 'error',
        reason: String(error),
        retryAfterMs: undefined,
      }),
    );
  }

  #succeeded(
    batch: Batch,
    outcome: Extract<ExportOutcome, { kind: 'success' }>,
    latencyMs: number,
  ): void {
    this.#backoff.succeeded();
    const rejected = Math.min(batch.length, Math.max(0, outcome.rejectedSpans));
    this.#exported += batch.length - rejected;
    if (rejected > 0 || outcome.rejectionMessage !== '') {
      this.#rejected += rejected;
      this.#call(() => this.#options.onRejected?.(rejected, outcome.rejectionMessage, batch));
    }
    this.#call(() => this.#options.onExported?.(batch, latencyMs, rejected));
  }

  #retry(batch: Batch, reason: string, retryAfterMs: number | undefined): void {
    this.#failedAttempts += 1;
    // A request shutdown cut did not fail: its spans are counted as not delivered, not retried.
    if (!this.#cutting) this.#call(() => this.#options.onFailed?.(reason, batch.length));
    // Back in front, whole: it is retried before newer spans, never dropped.
    this.#retries.unshift(batch);
    this.#retrySpans += batch.length;
    this.#backoff.failed(retryAfterMs);
  }

  #drop(batch: Batch, status: string, reason: string): void {
    this.#dropped += batch.length;
    this.#droppedByStatus[status] = (this.#droppedByStatus[status] ?? 0) + batch.length;
    this.#call(() => this.#options.onDropped?.(batch, status, reason));
  }

  #call(hook: () => void): void {
    try {
      hook();
    } catch (error) {
      diag.error('tooltrace: a ReliableSpanProcessor hook failed', error);
    }
  }
}

/** A batch and its body, kept until it was exported or dropped. */
interface Batch extends ExportBatch {
  readonly body: unknown;
}

const NOTHING_KEPT: readonly object[] = [];

function batchOf(
  body: unknown,
  length: number,
  firstSpanName: string,
  firstSpanId: string,
  kept: object | object[] | undefined,
): Batch {
  const keptList =
    kept === undefined
      ? NOTHING_KEPT
      : Array.isArray(kept)
        ? kept.length === 0
          ? NOTHING_KEPT
          : kept
        : [kept];
  return { body, length, firstSpanName, firstSpanId, kept: keptList };
}
