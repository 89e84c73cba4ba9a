import { describe, expect, it } from 'vitest';
import type { PrometheusSeries } from './prometheus-names.js';
import { promqlNames, queryProblems } from './promql-names.js';

const SERIES: PrometheusSeries[] = [
  { name: 'calls_seconds_bucket', instrument: 'calls', labels: ['tool', 'error_type', 'le'] },
  { name: 'calls_seconds_count', instrument: 'calls', labels: ['tool', 'error_type'] },
  { name: 'lines_total', instrument: 'lines', labels: ['source'] },
];

describe('promqlNames()', () => {
  it('reads selectors, their matchers, grouping labels and functions', () => {
    const names = promqlNames(
      'sum by (tool, error_type) (rate(calls_seconds_count{error_type!="", tool=~"a|b"}[$__rate_interval])) / ignoring (error_type) group_left sum by (tool) (rate(calls_seconds_count[5m]))',
    );
    expect(names.selectors).toEqual([
      { metric: 'calls_seconds_count', labels: ['error_type', 'tool'] },
      { metric: 'calls_seconds_count', labels: [] },
    ]);
    expect(names.groupingLabels).toEqual(['tool', 'error_type', 'error_type', 'tool']);
    expect(names.functions).toEqual(['sum', 'rate', 'sum', 'rate']);
    expect(names.problems).toEqual([]);
  });

  it('reads numbers, durations, comparisons and strings with braces as what they are', () => {
    const names = promqlNames(
      'histogram_quantile(0.95, sum by (le) (rate(calls_seconds_bucket{tool="{x}"}[1h30m] offset 5m))) > 0',
    );
    expect(names.selectors).toEqual([{ metric: 'calls_seconds_bucket', labels: ['tool'] }]);
    expect(names.problems).toEqual([]);
  });

  it('reports what it cannot check: variables, label functions, nameless selectors', () => {
    expect(promqlNames('rate(calls_seconds_count{tool="$tool"}[5m])').problems).toEqual([
      'uses the Grafana variable $tool, which this check cannot resolve',
    ]);
    expect(promqlNames('label_replace(lines_total, "a", "$1", "source", "(.*)")').problems).toEqual(
      ['calls label_replace(), which this check does not know'],
    );
    expect(promqlNames('{__name__="lines_total"}').problems).toEqual([
      'has a selector without a metric name',
    ]);
  });
});

describe('queryProblems()', () => {
  it('finds nothing wrong with a query of existing series and labels', () => {
    expect(
      queryProblems(
        'histogram_quantile(0.5, sum by (tool, le) (rate(calls_seconds_bucket[5m])))',
        SERIES,
      ),
    ).toEqual([]);
  });

  it('reports a metric that is not emitted', () => {
    expect(queryProblems('sum(rate(calls_total[5m]))', SERIES)).toEqual([
      'names calls_total, which tooltrace does not emit',
    ]);
  });

  it('reports a matcher or grouping label the metric does not carry', () => {
    expect(queryProblems('sum by (reason) (rate(lines_total{tool="x"}[5m]))', SERIES)).toEqual([
      'matches lines_total on tool, which it does not carry (it has source)',
      'groups by reason, which lines_total (lines) does not carry',
    ]);
  });

  it('reports a quantile over buckets that are summed away or are not buckets', () => {
    expect(
      queryProblems(
        'histogram_quantile(0.5, sum by (tool) (rate(calls_seconds_bucket[5m])))',
        SERIES,
      ),
    ).toEqual(['calls histogram_quantile() without keeping le in its by (…) clause']);
    expect(
      queryProblems('histogram_quantile(0.5, sum by (le) (rate(calls_seconds_count[5m])))', SERIES),
    ).toEqual([
      'groups by le, which calls_seconds_count (calls) does not carry',
      'calls histogram_quantile() on no _bucket series',
    ]);
  });
});
