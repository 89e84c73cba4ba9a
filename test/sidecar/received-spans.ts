import type { ReceivedSpan } from '../../src/testing/index.js';

/**
 * Everything that makes two received spans "the same span": ids, parent, name, times, status,
 * attributes and events, as one comparable string (bigints written as decimal text).
 */
export function spanSignature(span: ReceivedSpan): string {
  return JSON.stringify(
    {
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      name: span.name,
      kind: span.kind,
      start: span.startTimeUnixNano,
      end: span.endTimeUnixNano,
      status: span.status,
      attributes: sortKeys(span.attributes),
      events: span.events.map((event) => ({ ...event, attributes: sortKeys(event.attributes) })),
    },
    (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
  );
}

function sortKeys(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).sort(([left], [right]) => (left < right ? -1 : 1)),
  );
}

/**
 * The calls' own spans: every span but the in-flight snapshots (`tooltrace.inflight=true`) the
 * sidecar exports while a call runs longer than the live interval.
 */
export function finalSpans(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  return spans.filter((span) => span.attributes['tooltrace.inflight'] !== true);
}

/**
 * Tool call ids (`gen_ai.tool.call.id`) of the calls' own spans, without repeats: a call whose
 * only in-flight snapshots arrived is not counted yet.
 */
export function distinctCallIds(spans: readonly ReceivedSpan[]): Set<string> {
  const ids = new Set<string>();
  for (const span of finalSpans(spans)) {
    // Agent spans (an llm.response's chat span) carry no call id.
    const id = span.attributes['gen_ai.tool.call.id'];
    if (typeof id === 'string') ids.add(id);
  }
  return ids;
}

/** Span ids of the spans, without repeats. */
export function distinctSpanIds(spans: readonly ReceivedSpan[]): Set<string> {
  return new Set(spans.map((span) => span.spanId));
}

/**
 * Checks that spans sharing a span id are identical; returns the ids of those that are not
 * (empty when every duplicate is an exact copy).
 */
export function divergentDuplicates(spans: readonly ReceivedSpan[]): string[] {
  const seen = new Map<string, string>();
  const divergent = new Set<string>();
  for (const span of spans) {
    const signature = spanSignature(span);
    const earlier = seen.get(span.spanId);
    if (earlier === undefined) seen.set(span.spanId, signature);
    else if (earlier !== signature) divergent.add(span.spanId);
  }
  return [...divergent];
}
