import type { ReceivedSpan } from '../otlp/index.js';
import { DistinctCount } from './distinct-count.js';

/** Limits of {@link DrawnSpans}. */
export interface DrawnSpansLimits {
  /**
   * Most spans held in all; past it a new trace is only counted, and only the root of a trace
   * already held is still kept (so that what is drawn of it hangs together).
   * @default 20000
   */
  maxSpans?: number;
  /**
   * Most spans held of one trace, its root not counted; the rest of it is counted.
   * @default 5000
   */
  maxSpansPerTrace?: number;
}

/** A trace not drawn whole, and how much of it was left out. */
export interface TraceLeftOut {
  traceId: string;
  /** Spans of the trace held for drawing. */
  drawn: number;
  /** Spans of the trace seen and not held. */
  leftOut: number;
  /**
   * Why: `trace` when the trace itself is over `maxSpansPerTrace` (too large to draw whole),
   * `total` when it was cut because every span the waterfall holds was taken.
   */
  limit: 'trace' | 'total';
}

/** What {@link DrawnSpans} did not hold. */
export interface SpansLeftOut {
  /** Traces drawn in part, in the order they first lost a span. */
  traces: TraceLeftOut[];
  /** Traces not drawn at all (every span came past `maxSpans`), and their spans. */
  tracesNotDrawn: number;
  /** Whether {@link tracesNotDrawn} is an estimate (past 50,000 traces, see `DistinctCount`). */
  tracesNotDrawnEstimated: boolean;
  spansNotDrawn: number;
}

const DEFAULT_MAX_SPANS = 20_000;
const DEFAULT_MAX_SPANS_PER_TRACE = 5_000;

/**
 * The spans `tooltrace view` holds to draw, within bounds: a waterfall of more than a few
 * thousand rows is not read by anyone, and a journal of a few GB holds millions of spans. What
 * goes past a bound is counted by trace ({@link leftOut}), so the drawing can say what it left
 * out. Memory is bounded by the limits, not by the size of the file read.
 */
export class DrawnSpans {
  readonly #maxSpans: number;
  readonly #maxSpansPerTrace: number;
  readonly #spans: ReceivedSpan[] = [];
  /** Spans held of each trace held: all of them, and those that count against its bound. */
  readonly #heldByTrace = new Map<string, { all: number; bounded: number }>();
  /** Spans not held of traces held, by trace id, and whether the trace's own bound was hit. */
  readonly #leftOutByTrace = new Map<string, { count: number; limit: 'trace' | 'total' }>();
  /** Traces none of whose spans are held, each counted once. */
  #tracesNotDrawn = new DistinctCount();
  #spansNotDrawn = 0;
  #released = false;

  constructor(limits: DrawnSpansLimits = {}) {
    this.#maxSpans = limits.maxSpans ?? DEFAULT_MAX_SPANS;
    this.#maxSpansPerTrace = limits.maxSpansPerTrace ?? DEFAULT_MAX_SPANS_PER_TRACE;
  }

  /** The spans held, in the order they came. */
  get spans(): readonly ReceivedSpan[] {
    return this.#spans;
  }

  /** Whether {@link release} was called: nothing is held from then on. */
  get released(): boolean {
    return this.#released;
  }

  /** Holds `span` if the limits allow, else counts it. */
  add(span: ReceivedSpan): void {
    if (this.#released) return;
    const { traceId } = span;
    const held = this.#heldByTrace.get(traceId);
    const isRoot = span.parentSpanId === '';
    if (held === undefined) {
      if (this.#spans.length >= this.#maxSpans) {
        this.#notDrawn(traceId);
        return;
      }
      this.#heldByTrace.set(traceId, { all: 1, bounded: isRoot ? 0 : 1 });
      this.#spans.push(span);
      return;
    }
    if (isRoot || (held.bounded < this.#maxSpansPerTrace && this.#spans.length < this.#maxSpans)) {
      held.all += 1;
      if (!isRoot) held.bounded += 1;
      this.#spans.push(span);
      return;
    }
    const leftOut = this.#leftOutByTrace.get(traceId);
    const limit = held.bounded >= this.#maxSpansPerTrace ? 'trace' : 'total';
    if (leftOut === undefined) this.#leftOutByTrace.set(traceId, { count: 1, limit });
    else {
      leftOut.count += 1;
      if (limit === 'trace') leftOut.limit = limit;
    }
  }

  /**
   * Lets go of every span held and holds none from then on: `tooltrace view` calls it once it
   * knows it will print a summary instead of drawing (more traces than the screen has rows), so
   * that what it holds while reading the rest of a large journal is the summary alone.
   */
  release(): void {
    this.#released = true;
    this.#spans.length = 0;
    this.#heldByTrace.clear();
    this.#leftOutByTrace.clear();
    this.#tracesNotDrawn = new DistinctCount();
    this.#spansNotDrawn = 0;
  }

  /** What was not held: traces drawn in part, and traces not drawn at all. */
  leftOut(): SpansLeftOut {
    const traces = [...this.#leftOutByTrace].map(([traceId, { count, limit }]) => ({
      traceId,
      drawn: this.#heldByTrace.get(traceId)?.all ?? 0,
      leftOut: count,
      limit,
    }));
    return {
      traces,
      tracesNotDrawn: this.#tracesNotDrawn.size,
      tracesNotDrawnEstimated: this.#tracesNotDrawn.estimated,
      spansNotDrawn: this.#spansNotDrawn,
    };
  }

  #notDrawn(traceId: string): void {
    this.#spansNotDrawn += 1;
    this.#tracesNotDrawn.add(traceId);
  }
}
