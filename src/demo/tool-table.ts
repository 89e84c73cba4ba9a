import { MeterProvider, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { formatDuration, formatToolTable, type ToolTableRow } from '../view/index.js';
import { CollectedMetricReader } from './collected-metric-reader.js';

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
          // One rule with `tooltrace view`: an error is a failed call; a cancelled one (the
          // caller stopped it) is not, though its error.type is `cancelled`.
          const errorType = point.attributes['error.type'];
          if (errorType !== undefined && errorType !== 'cancelled')
            entry.errors += point.value.count;
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
