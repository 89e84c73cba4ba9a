import { MeterProvider, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { CollectedMetricReader } from './collected-metric-reader.js';
import { formatDuration } from './waterfall.js';

/** One row of the end screen's table. */
interface ToolRow {
  calls: number;
  errors: number;
  /** Bucket counts of `gen_ai.execute_tool.duration`, all outcomes merged. */
  buckets: number[];
  boundaries: number[];
  firstPartialSum: number;
  firstPartialCount: number;
}

/**
 * The demo's own metrics: a MeterProvider the subscriber records into, read once at the end to
 * print a per-tool table (calls, errors, p95 duration, mean time to first partial) from the very
 * instruments a user's dashboard would chart.
 */
export class ToolTable {
  readonly #reader = new CollectedMetricReader();
  readonly meterProvider = new MeterProvider({ readers: [this.#reader] });

  /** The table, one row per tool, in name order. */
  async render(): Promise<string> {
    const { resourceMetrics } = await this.#reader.collect();
    const rows = new Map<string, ToolRow>();
    const row = (tool: string): ToolRow => {
      let found = rows.get(tool);
      if (found === undefined) {
        found = {
          calls: 0,
          errors: 0,
          buckets: [],
          boundaries: [],
          firstPartialSum: 0,
          firstPartialCount: 0,
        };
        rows.set(tool, found);
      }
      return found;
    };
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        const name = metric.descriptor.name;
        if (
          name !== 'gen_ai.execute_tool.duration' &&
          name !== 'tooltrace.tool.time_to_first_partial'
        ) {
          continue;
        }
        for (const point of (metric as HistogramMetricData).dataPoints) {
          const tool = String(point.attributes['gen_ai.tool.name'] ?? '');
          const entry = row(tool);
          if (name === 'tooltrace.tool.time_to_first_partial') {
            entry.firstPartialSum += point.value.sum ?? 0;
            entry.firstPartialCount += point.value.count;
            continue;
          }
          entry.calls += point.value.count;
          if (point.attributes['error.type'] !== undefined) entry.errors += point.value.count;
          entry.boundaries = point.value.buckets.boundaries;
          point.value.buckets.counts.forEach((count, index) => {
            entry.buckets[index] = (entry.buckets[index] ?? 0) + count;
          });
        }
      }
    }
    const table: ToolTableRow[] = [];
    for (const [tool, entry] of rows) {
      if (entry.calls === 0) continue;
      table.push({
        tool,
        calls: entry.calls,
        errors: entry.errors,
        p95: upperBoundAt(entry, 0.95),
        firstPartial:
          entry.firstPartialCount === 0
            ? '—'
            : formatDuration(
                BigInt(Math.round((entry.firstPartialSum / entry.firstPartialCount) * 1e9)),
              ),
      });
    }
    return formatToolTable(table);
  }

  shutdown(): Promise<void> {
    return this.meterProvider.shutdown();
  }
}

/** One row of a per-tool table, its durations already formatted. */
export interface ToolTableRow {
  tool: string;
  calls: number;
  errors: number;
  /** The median duration; the column is left out when no row has one. */
  p50?: string;
  p95: string;
  /** Mean time to first partial, `—` when no call streamed. */
  firstPartial: string;
}

/**
 * The per-tool table the demo ends with and `tooltrace view` summarises with, one row per tool
 * in name order: calls, errors, p50 (when known), p95 and mean time to first partial.
 */
export function formatToolTable(rows: readonly ToolTableRow[]): string {
  const withP50 = rows.some((row) => row.p50 !== undefined);
  const line = (cells: readonly string[]): string => {
    const [tool, calls, errors, ...rest] = cells;
    return `  ${tool!.padEnd(16)} ${calls!.padStart(5)} ${errors!.padStart(6)} ${rest
      .map((cell, index) => cell.padStart(index === rest.length - 1 ? 14 : 8))
      .join(' ')}`;
  };
  const header = withP50
    ? ['tool', 'calls', 'errors', 'p50', 'p95', 'first partial']
    : ['tool', 'calls', 'errors', 'p95 ≤', 'first partial'];
  const lines = [line(header)];
  for (const row of [...rows].sort((left, right) => left.tool.localeCompare(right.tool))) {
    const p50 = withP50 ? [row.p50 ?? '—'] : [];
    lines.push(
      line([row.tool, String(row.calls), String(row.errors), ...p50, row.p95, row.firstPartial]),
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The upper bound of the bucket holding the `quantile` of the recorded values: all a histogram
 * can say (the p95 is at most this), shown as `≤ 1.28s`; `> 81.92s` past the last bound.
 */
function upperBoundAt(entry: ToolRow, quantile: number): string {
  const wanted = Math.ceil(entry.calls * quantile);
  let seen = 0;
  for (const [index, count] of entry.buckets.entries()) {
    seen += count;
    if (seen >= wanted) {
      const bound = entry.boundaries[index];
      return bound === undefined
        ? `> ${formatDuration(BigInt(Math.round((entry.boundaries.at(-1) ?? 0) * 1e9)))}`
        : formatDuration(BigInt(Math.round(bound * 1e9)));
    }
  }
  return '—';
}
