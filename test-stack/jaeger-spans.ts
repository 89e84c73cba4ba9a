import { readFile } from 'node:fs/promises';
import { decodeTraceRequest } from '../src/otlp/index.js';

/** A span as Jaeger's query API (`/api/traces`) returns it, reduced to what the checks read. */
export interface StoredSpan {
  traceId: string;
  spanId: string;
  /** The CHILD_OF reference's span id, `''` for a root. */
  parentSpanId: string;
  name: string;
  /** Tags, by key (Jaeger's `otel.status_code`, `error`, the span's own attributes). */
  tags: Record<string, unknown>;
}

interface JaegerTrace {
  traceID: string;
  spans: {
    traceID: string;
    spanID: string;
    operationName: string;
    references?: { refType: string; traceID: string; spanID: string }[];
    tags?: { key: string; value: unknown }[];
  }[];
}

/**
 * Every span Jaeger holds for the traces of `service` (up to `limit` traces), read through its
 * query API with `raw=true`: Jaeger's adjusters, which by default fold identical copies of a
 * span into one, are skipped, so a span stored twice is counted twice.
 */
export async function storedSpans(
  jaegerUrl: string,
  service: string,
  limit = 20_000,
): Promise<StoredSpan[]> {
  const url = new URL('/api/traces', jaegerUrl);
  url.searchParams.set('service', service);
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('lookback', '2h');
  url.searchParams.set('raw', 'true');
  const response = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  if (!response.ok) {
    throw new Error(
      `GET ${url.pathname}${url.search}: ${response.status} ${await response.text()}`,
    );
  }
  const body = (await response.json()) as { data: JaegerTrace[] | null };
  return (body.data ?? []).flatMap((trace) => trace.spans.map(toStoredSpan));
}

/** One trace by id, as Jaeger shows it by default (adjusted: identical copies folded). */
export async function shownTrace(jaegerUrl: string, traceId: string): Promise<StoredSpan[]> {
  const url = new URL(`/api/traces/${traceId}`, jaegerUrl);
  const response = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  if (response.status === 404) return [];
  if (!response.ok) throw new Error(`GET ${url.pathname}: ${response.status}`);
  const body = (await response.json()) as { data: JaegerTrace[] | null };
  return (body.data ?? []).flatMap((trace) => trace.spans.map(toStoredSpan));
}

function toStoredSpan(span: JaegerTrace['spans'][number]): StoredSpan {
  const parent = span.references?.find((reference) => reference.refType === 'CHILD_OF');
  return {
    traceId: span.traceID,
    spanId: span.spanID,
    parentSpanId: parent?.spanID ?? '',
    name: span.operationName,
    tags: Object.fromEntries((span.tags ?? []).map((tag) => [tag.key, tag.value])),
  };
}

/** A span as the sidecar wrote it to its `--out` file: what it ended, the ground truth. */
export interface WrittenSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  statusCode: number;
  attributes: Record<string, unknown>;
}

/** Every span in an OTLP JSON lines file (the sidecar's `--out`), one export request a line. */
export async function writtenSpans(path: string): Promise<WrittenSpan[]> {
  const text = await readFile(path, 'utf8');
  const spans: WrittenSpan[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    for (const span of decodeTraceRequest(Buffer.from(line), 'application/json')) {
      spans.push({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId,
        name: span.name,
        statusCode: span.status.code,
        attributes: span.attributes,
      });
    }
  }
  return spans;
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

/** What Jaeger holds of the spans the sidecar wrote: missing, held once, held more than once. */
export interface Delivery {
  written: number;
  once: number;
  missing: string[];
  /** Span keys held more than once, with how many copies. */
  duplicated: [string, number][];
  /** Spans Jaeger holds that the sidecar never wrote (must be none). */
  unknown: string[];
}

/** Compares what the sidecar wrote with what Jaeger holds, span by span. */
export function compareDelivery(
  written: readonly WrittenSpan[],
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
