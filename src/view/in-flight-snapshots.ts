import type { ReceivedSpan } from '../otlp/index.js';

/** Calls whose latest snapshot is held at most, waiting for their final span. */
const MAX_CALLS = 10_000;

/**
 * Takes the in-flight snapshots (`tooltrace.inflight=true`, what a sidecar with live updates
 * exports while a call runs) out of the spans `tooltrace view` reads, in one place: each is
 * counted, and the latest one of each call is held until the call's final span arrives. A call
 * that never ended (its process died) is drawn from its latest snapshot, as an `(in flight)` row
 * ({@link unended}); every other snapshot repeats a call drawn whole, and is not drawn at all.
 */
export class InFlightSnapshots {
  /** Snapshots seen. */
  count = 0;
  /** The latest snapshot of each call without a final span yet, by trace and call span id. */
  readonly #latest = new Map<string, ReceivedSpan>();

  /** Whether `span` is a snapshot (taken here); a final span lets go of its call's snapshot. */
  take(span: ReceivedSpan): boolean {
    if (span.attributes['tooltrace.inflight'] !== true) {
      if (this.#latest.size > 0) this.#latest.delete(`${span.traceId}/${span.spanId}`);
      return false;
    }
    this.count += 1;
    const call = `${span.traceId}/${span.parentSpanId}`;
    const previous = this.#latest.get(call);
    if (
      previous === undefined ? this.#latest.size < MAX_CALLS : updateOf(span) > updateOf(previous)
    ) {
      this.#latest.set(call, span);
    }
    return true;
  }

  /**
   * The latest snapshot of each call whose final span never came: neither before its snapshot
   * nor among `finals` (the spans read, which may hold a final span read after the snapshot).
   */
  unended(finals: readonly ReceivedSpan[]): ReceivedSpan[] {
    if (this.#latest.size === 0) return [];
    const ended = new Set(finals.map((span) => `${span.traceId}/${span.spanId}`));
    return [...this.#latest].filter(([call]) => !ended.has(call)).map(([, span]) => span);
  }
}

function updateOf(span: ReceivedSpan): number {
  const update = span.attributes['tooltrace.inflight.update'];
  return typeof update === 'number' ? update : 0;
}
