import { MeterProvider, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { formatDuration, formatToolTable } from '../view/index.js';
import { CollectedMetricReader } from './collected-metric-reader.js';

const DURATION = 'gen_ai.execute_tool.duration';
const FIRST_PARTIAL = 'tooltrace.tool.time_to_first_partial';

/** One row of the end screen's table, as the histograms add up per tool. */
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
    for (const metric of resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
      const name = metric.descriptor.name;
      if (name !== DURATION && name !== FIRST_PARTIAL) continue;
      for (const { attributes, value } of (metric as HistogramMetricData).dataPoints) {
        const tool = String(attributes['gen_ai.tool.name'] ?? '');
        const row = rows.get(tool) ?? emptyRow();
        rows.set(tool, row);
        if (name === FIRST_PARTIAL) {
          row.firstPartialSum += value.sum ?? 0;
          row.firstPartialCount += value.count;
          continue;
        }
        row.calls += value.count;
        // One rule with `tooltrace view`: an error is a failed call; a cancelled one (the
        // caller stopped it) is not, though its error.type is `cancelled`.
        const errorType = attributes['error.type'];
        if (errorType !== undefined && errorType !== 'cancelled') row.errors += value.count;
        row.boundaries = value.buckets.boundaries;
        value.buckets.counts.forEach((count, index) => {
          row.buckets[index] = (row.buckets[index] ?? 0) + count;
        });
      }
    }
    return formatToolTable(
      [...rows]
        .filter(([, row]) => row.calls > 0)
        .map(([tool, row]) => ({
          tool,
          calls: row.calls,
          errors: row.errors,
          p95: upperBoundAt(row, 0.95),
          firstPartial:
            row.firstPartialCount === 0
              ? '—'
              : seconds(row.firstPartialSum / row.firstPartialCount),
        })),
    );
  }

  shutdown(): Promise<void> {
    return this.meterProvider.shutdown();
  }
}

/**
 * The upper bound of the bucket holding the `quantile` of the recorded values: all a histogram
 * can say (the p95 is at most this), shown as `≤ 1.28s`; `> 81.92s` past the last bound.
 */
function upperBoundAt(row: ToolRow, quantile: number): string {
  const wanted = Math.ceil(row.calls * quantile);
  let seen = 0;
  for (const [index, count] of row.buckets.entries()) {
    seen += count;
    if (seen < wanted) continue;
    const bound = row.boundaries[index];
    return bound === undefined ? `> ${seconds(row.boundaries.at(-1) ?? 0)}` : seconds(bound);
  }
  return '—';
}

function emptyRow(): ToolRow {
  return {
    calls: 0,
    errors: 0,
    buckets: [],
    boundaries: [],
    firstPartialSum: 0,
    firstPartialCount: 0,
  };
}

function seconds(value: number): string {
  return formatDuration(BigInt(Math.round(value * 1e9)));
}
