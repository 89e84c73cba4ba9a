import type { PlainValue } from './any-value.js';
import type { ReceivedScope } from './received-scope.js';

/** One data point of a metric the receiver got, flattened with its metric's description. */
export interface ReceivedMetricPoint {
  /** The instrument's name, e.g. `gen_ai.execute_tool.duration`. */
  readonly name: string;
  readonly unit: string;
  /** `histogram`, `sum` or `gauge`. */
  readonly type: 'histogram' | 'sum' | 'gauge';
  readonly attributes: Readonly<Record<string, PlainValue>>;
  /** Histograms: how many values were recorded. */
  readonly count: number | undefined;
  /** Histograms: their sum; sums and gauges: the point's value. */
  readonly value: number | undefined;
  /**
   * Sums and histograms: the metric's aggregation temporality (`delta` or `cumulative`);
   * gauges have none.
   */
  readonly temporality: 'delta' | 'cumulative' | undefined;
  readonly resource: Readonly<Record<string, unknown>>;
  readonly scope: ReceivedScope;
}
