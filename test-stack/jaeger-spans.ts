import type { ReceivedSpan } from '../src/testing/index.js';
import { parentOf, type JaegerQuery } from '../scripts/stack/stack.js';

/** A span as Jaeger stores it, reduced to what the delivery checks read. */
export interface StoredSpan {
  traceId: string;
  spanId: string;
  /** The CHILD_OF reference's span id, `''` for a root. */
  parentSpanId: string;
  name: string;
}

/**
 * Every span Jaeger holds for the traces of `service`, read through its query API as stored
 * (`raw`): a span stored twice is counted twice, where Jaeger's default view would fold the
 * identical copies into one.
 */
export async function storedSpans(jaeger: JaegerQuery, service: string): Promise<StoredSpan[]> {
  const traces = await jaeger.traces(service, { limit: 50_000, raw: true });
  return traces.flatMap((trace) =>
    trace.spans.map((span) => ({
      traceId: span.traceID,
      spanId: span.spanID,
      parentSpanId: parentOf(span) ?? '',
      name: span.operationName,
    })),
  );
}

/** `traceId/spanId`: one span's identity. */
export function spanKey(span: { traceId: string; spanId: string }): string {
  return `${span.traceId}/${span.spanId}`;
}

/** How many times each span is held, by {@link spanKey}. */
export function countByKey(
  spans: readonly { traceId: string; spanId: string }[],
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const span of spans) counts.set(spanKey(span), (counts.get(spanKey(span)) ?? 0) + 1);
  return counts;
}

/** What Jaeger holds of the spans a sidecar ended: missing, held once, held more than once. */
export interface Delivery {
  /** Spans the sidecar ended (its `--out` file). */
  written: number;
  /** Of those, held exactly once. */
  once: number;
  missing: string[];
  /** Span keys held more than once, with how many copies. */
  duplicated: [string, number][];
  /** Spans Jaeger holds for the service that the sidecar never ended (must be none). */
  unknown: string[];
}

/** Compares what a sidecar ended with what Jaeger holds, span by span. */
export function compareDelivery(
  written: readonly ReceivedSpan[],
  stored: readonly StoredSpan[],
): Delivery {
  const held = countByKey(stored);
  const writtenKeys = new Set(written.map(spanKey));
  const missing: string[] = [];
  const duplicated: [string, number][] = [];
  let once = 0;
  for (const key of writtenKeys) {
    const count = held.get(key) ?? 0;
    if (count === 0) missing.push(key);
    else if (count === 1) once += 1;
    else duplicated.push([key, count]);
  }
  const unknown = [...held.keys()].filter((key) => !writtenKeys.has(key));
  return { written: writtenKeys.size, once, missing, duplicated, unknown };
}
