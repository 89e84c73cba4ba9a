import { describe, expect, it } from 'vitest';
import type { EmittedInstrument } from './emitted-metrics.js';
import { prometheusLabel, prometheusMetricName, prometheusSeries } from './prometheus-names.js';

function instrument(
  name: string,
  unit: string,
  kind: EmittedInstrument['kind'],
  attributes: string[] = [],
): EmittedInstrument {
  return { name, unit, kind, attributes };
}

describe('prometheusMetricName()', () => {
  it.each([
    [instrument('http.server.duration', 's', 'histogram'), 'http_server_duration_seconds'],
    [instrument('requests.count', '1', 'counter'), 'requests_count_total'],
    [instrument('memory.usage', 'By', 'gauge'), 'memory_usage_bytes'],
    [instrument('cpu.utilization', '1', 'gauge'), 'cpu_utilization_ratio'],
    [instrument('gen_ai.client.token.usage', '{token}', 'histogram'), 'gen_ai_client_token_usage'],
    [instrument('calls.in_flight', '{call}', 'gauge'), 'calls_in_flight'],
    [instrument('lines.total.received', '{line}', 'counter'), 'lines_received_total'],
    [instrument('wait.seconds', 's', 'histogram'), 'wait_seconds'],
    [instrument('a..b__c', '', 'gauge'), 'a_b_c'],
  ])('names %o %s', (given, expected) => {
    expect(prometheusMetricName(given)).toBe(expected);
  });

  it('refuses a unit it has no suffix for, rather than guessing', () => {
    expect(() => prometheusMetricName(instrument('rate', 'By/s', 'gauge'))).toThrow(/By\/s/);
  });
});

describe('prometheusLabel()', () => {
  it.each([
    ['gen_ai.tool.name', 'gen_ai_tool_name'],
    ['error.type', 'error_type'],
    ['123abc', 'key_123abc'],
    ['_private', 'key_private'],
    ['__reserved', '__reserved'],
  ])('names %s %s', (attribute, label) => {
    expect(prometheusLabel(attribute)).toBe(label);
  });
});

describe('prometheusSeries()', () => {
  it('gives a histogram _bucket (with le), _sum and _count, with resource labels', () => {
    const series = prometheusSeries(instrument('op.duration', 's', 'histogram', ['tool.name']), [
      'job',
    ]);
    expect(series.map((entry) => [entry.name, entry.labels])).toEqual([
      ['op_duration_seconds_bucket', ['tool_name', 'job', 'le']],
      ['op_duration_seconds_sum', ['tool_name', 'job']],
      ['op_duration_seconds_count', ['tool_name', 'job']],
    ]);
  });
});
