import { createNoopMeter, metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { CollectedMetricReader } from '../../src/demo/collected-metric-reader.js';
import { AgentMetrics } from '../../src/otel/agent-metrics.js';

describe('AgentMetrics', () => {
  describe('recording', () => {
    it('is false for the API no-op meter, which records nothing', () => {
      expect(new AgentMetrics({ getMeter: () => createNoopMeter() }).recording).toBe(false);
      expect(new AgentMetrics(metrics.getMeterProvider()).recording).toBe(false);
    });

    it('is true for a meter provider that records', async () => {
      const reader = new CollectedMetricReader();
      const provider = new MeterProvider({ readers: [reader] });
      const recorder = new AgentMetrics(provider);
      expect(recorder.recording).toBe(true);
      recorder.callStarted('search');
      const { resourceMetrics } = await reader.collect();
      const names = resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.map((metric) => metric.descriptor.name),
      );
      expect(names).toContain('tooltrace.tool.calls.in_flight');
      await provider.shutdown();
    });
  });
});
