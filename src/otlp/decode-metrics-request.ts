import { decodeKeyValues } from './any-value.js';
import { decodeMetricsProtobuf, temporalityOf } from './decode-metrics-protobuf.js';
import { decodeProtobufBody, parseJsonBody, requestEncodingOf } from './otlp-encoding.js';
import { recordField, recordsField, stringField, type OtlpRecord } from './otlp-fields.js';
import { doubleOf, int64Of } from './otlp-scalars.js';
import type { ReceivedMetricPoint } from './received-metric-point.js';
import { forEachScopedItem } from './received-scope.js';

const TYPES = ['histogram', 'sum', 'gauge'] as const;

/**
 * Decodes the body of an OTLP/HTTP metrics export (`ExportMetricsServiceRequest`, protobuf or
 * JSON) into its data points, each with its metric's name, unit and type: histograms (count and
 * sum), sums and gauges (the value). Other metric types (exponential histograms, summaries) are
 * skipped. Errors are those of `decodeTraceRequest`.
 */
export function decodeMetricsRequest(body: Uint8Array, contentType: string): ReceivedMetricPoint[] {
  if (requestEncodingOf(contentType) === 'protobuf') {
    return decodeProtobufBody(body, 'ExportMetricsServiceRequest', decodeMetricsProtobuf);
  }
  const root = parseJsonBody(body);
  const points: ReceivedMetricPoint[] = [];
  forEachScopedItem(root, 'Metrics', 'metrics', (metric, where, resource, scope) => {
    const name = stringField(metric, 'name', where);
    const unit = stringField(metric, 'unit', where);
    for (const type of TYPES) {
      const data = recordField(metric, type, where);
      if (data === undefined) continue;
      const temporality = type === 'gauge' ? undefined : temporalityOf(data.aggregationTemporality);
      recordsField(data, 'dataPoints', `${where}.${type}`).forEach((point, pointIndex) => {
        const pointPath = `${where}.${type}.dataPoints[${pointIndex}]`;
        points.push({
          name,
          unit,
          type,
          attributes: decodeKeyValues(point, 'attributes', pointPath),
          count: type === 'histogram' ? countOf(point, pointPath) : undefined,
          value: valueOf(point, type, pointPath),
          temporality,
          resource,
          scope,
        });
      });
    }
  });
  return points;
}

function countOf(point: OtlpRecord, where: string): number {
  return Number(int64Of(point.count ?? 0, `${where}.count`));
}

function valueOf(point: OtlpRecord, type: string, where: string): number | undefined {
  if (type === 'histogram') {
    return point.sum === undefined ? undefined : doubleOf(point.sum, `${where}.sum`);
  }
  if (point.asDouble !== undefined) return doubleOf(point.asDouble, `${where}.asDouble`);
  if (point.asInt !== undefined) return Number(int64Of(point.asInt, `${where}.asInt`));
  return undefined;
}
