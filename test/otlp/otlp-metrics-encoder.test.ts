import { ValueType } from '@opentelemetry/api';
import { JsonMetricsSerializer, ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  AggregationType,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { decodeMetricsRequest, OtlpMetricsEncoder } from '../../src/otlp/index.js';
import { otlpProtoTypes } from './otlp-proto-schema.js';

/** A reader that collects when asked: what a periodic reader hands its exporter. */
class CollectingReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }

  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Every kind of instrument the sidecar and its users record, with attributes of every kind. */
async function collected(temporality: AggregationTemporality): Promise<ResourceMetrics> {
  const reader = new CollectingReader({
    aggregationTemporalitySelector: () => temporality,
  });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': 'tooltrace-sidecar', 'process.pid': 42 }),
    readers: [reader],
    views: [
      {
        instrumentName: 'exponential.duration',
        aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM },
      },
    ],
  });
  const meter = provider.getMeter('tooltrace', '0.1.0');
  const attributes = {
    'gen_ai.tool.name': 'search',
    'error.type': 'timeout',
    ok: false,
    attempt: 3,
    ratio: 0.5,
    tags: ['a', 'b'],
  };
  meter
    .createCounter('calls', { description: 'Tool calls', unit: '{call}', valueType: ValueType.INT })
    .add(5, attributes);
  meter.createUpDownCounter('open', { valueType: ValueType.INT }).add(-2);
  meter.createCounter('bytes').add(1.5);
  meter.createCounter('rejected', { valueType: ValueType.INT }).add(0);
  meter.createCounter('dropped').add(0);
  meter.createGauge('queue.fill').record(0.75, { queue: 'spans' });
  const histogram = meter.createHistogram('gen_ai.execute_tool.duration', { unit: 's' });
  for (const seconds of [0.004, 0.2, 3, 400]) histogram.record(seconds, attributes);
  const exponential = meter.createHistogram('exponential.duration');
  for (const seconds of [0.001, 0.5, 2, 2, 0]) exponential.record(seconds);
  meter.createHistogram('empty.duration');
  const { resourceMetrics } = await reader.collect();
  await provider.shutdown();
  return resourceMetrics;
}

function decodedProtobuf(body: Uint8Array): unknown {
  const type = otlpProtoTypes().exportMetricsServiceRequest;
  return type.toObject(type.decode(body), { longs: String, defaults: true });
}

/** A JSON body read by protobufjs as the OTLP/JSON mapping has it, then compared as protobuf. */
function decodedJson(body: Uint8Array): unknown {
  const type = otlpProtoTypes().exportMetricsServiceRequest;
  const message = type.fromObject(JSON.parse(Buffer.from(body).toString('utf8')) as object);
  return type.toObject(message, { longs: String, defaults: true });
}

describe('OtlpMetricsEncoder', () => {
  it.each([AggregationTemporality.CUMULATIVE, AggregationTemporality.DELTA])(
    'writes in protobuf what the stock serializer writes (temporality %s), once both are decoded',
    async (temporality) => {
      const metrics = await collected(temporality);
      const ours = new OtlpMetricsEncoder('protobuf').serializeRequest(metrics);
      const stock = ProtobufMetricsSerializer.serializeRequest(metrics)!;
      expect(decodedProtobuf(ours)).toEqual(decodedProtobuf(stock));
      expect(decodeMetricsRequest(ours, 'application/x-protobuf')).toEqual(
        decodeMetricsRequest(stock, 'application/x-protobuf'),
      );
    },
  );

  it('writes in OTLP/JSON what the stock serializer writes, and the same request as in protobuf', async () => {
    const metrics = await collected(AggregationTemporality.CUMULATIVE);
    const ours = new OtlpMetricsEncoder('json').serializeRequest(metrics);
    const stock = JsonMetricsSerializer.serializeRequest(metrics)!;
    expect(decodedJson(ours)).toEqual(decodedJson(stock));
    expect(decodedJson(ours)).toEqual(
      decodedProtobuf(new OtlpMetricsEncoder('protobuf').serializeRequest(metrics)),
    );
    expect(decodeMetricsRequest(ours, 'application/json')).toEqual(
      decodeMetricsRequest(stock, 'application/json'),
    );
  });

  it('follows the OTLP JSON mapping: 64-bit integers as strings, temporality as a number', async () => {
    const metrics = await collected(AggregationTemporality.DELTA);
    const body = JSON.parse(
      new OtlpMetricsEncoder('json').serializeRequest(metrics).toString('utf8'),
    ) as {
      resourceMetrics: {
        scopeMetrics: { metrics: { name: string; sum?: unknown; histogram?: unknown }[] }[];
      }[];
    };
    const metricsOut = body.resourceMetrics[0]!.scopeMetrics[0]!.metrics;
    const calls = metricsOut.find((metric) => metric.name === 'calls')!.sum as {
      aggregationTemporality: number;
      isMonotonic: boolean;
      dataPoints: { asInt: string; timeUnixNano: string }[];
    };
    expect(calls.aggregationTemporality).toBe(1);
    expect(calls.isMonotonic).toBe(true);
    expect(calls.dataPoints[0]!.asInt).toBe('5');
    expect(calls.dataPoints[0]!.timeUnixNano).toMatch(/^\d{19}$/);
    const duration = metricsOut.find((metric) => metric.name === 'gen_ai.execute_tool.duration')!
      .histogram as { dataPoints: { count: string; sum: number; bucketCounts: string[] }[] };
    expect(duration.dataPoints[0]!.count).toBe('4');
    expect(duration.dataPoints[0]!.sum).toBeCloseTo(403.204);
    expect(duration.dataPoints[0]!.bucketCounts.every((count) => typeof count === 'string')).toBe(
      true,
    );
  });
});
