import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import {
  JaegerQuery,
  startCollector,
  startJaeger,
  type Collector,
} from '../scripts/stack/stack.js';
import { collectorCounter } from './collector-metrics.js';

const binaries = inject('stackBinaries');
let collector: Collector;

// Its exporters point nowhere: only what its receivers accept is counted here.
beforeAll(async () => {
  collector = await startCollector(binaries.collector, {
    env: { JAEGER_OTLP_ENDPOINT: '127.0.0.1:9', TEMPO_OTLP_ENDPOINT: '127.0.0.1:9' },
  });
});
afterAll(async () => {
  await collector?.process.stop();
});

// Jaeger v2 traces its own query API by default, to OTEL_EXPORTER_OTLP_ENDPOINT or
// localhost:4317: with `npm run stack -- --otlp-grpc-port 4317` its own spans would land in the
// Collector and in Jaeger beside the user's, and its exit waits for that export to give up.
it('Jaeger sends no traces of its own queries to an OTLP endpoint in its environment', async () => {
  const jaeger = await startJaeger(binaries.jaeger, {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpGrpcUrl },
  });
  try {
    const query = new JaegerQuery(jaeger.queryUrl);
    for (let round = 0; round < 5; round += 1) {
      expect(await query.services()).toEqual([]);
      expect(await query.traces('nobody')).toEqual([]);
    }
  } finally {
    // Its tracer, when on, exports what it holds on the way out.
    await jaeger.process.stop();
  }
  expect(await collectorCounter(collector.metricsUrl, 'otelcol_receiver_accepted_spans')).toBe(0);
  expect(await collectorCounter(collector.metricsUrl, 'otelcol_receiver_refused_spans')).toBe(0);
});
