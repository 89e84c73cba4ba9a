import type { PlainValue } from './any-value.js';
import {
  readExportRequest,
  readKeyValue,
  UNSET_RESOURCE,
  UNSET_SCOPE,
  type ScopedItem,
} from './otlp-protobuf-common.js';
import { ProtobufReader } from './protobuf-reader.js';
import type { ReceivedMetricPoint } from './received-metric-point.js';

type PointType = ReceivedMetricPoint['type'];
type Point = Omit<ReceivedMetricPoint, 'resource' | 'scope'>;

/** One `Metric` and its data points, before the resource and scope it sits in are known. */
interface DecodedMetric extends ScopedItem {
  points: Point[];
}

/**
 * Decodes a protobuf `ExportMetricsServiceRequest` into data points in one pass over the bytes,
 * with the field numbers of opentelemetry-proto metrics/v1: histograms (count and sum), sums
 * and gauges (the value), as the JSON decoder gives them. Exponential histograms and summaries
 * are skipped. Throws a `RangeError` when the body is not valid protobuf; the caller turns it
 * into an `OtlpDecodeError`.
 */
export function decodeMetricsProtobuf(body: Uint8Array): ReceivedMetricPoint[] {
  const metrics = readExportRequest(new ProtobufReader(body), readMetric);
  return metrics.flatMap(({ points, resource, scope }) =>
    points.map((point) => ({ ...point, resource, scope })),
  );
}

/** `Metric`: name, unit, and the data points of its gauge, sum or histogram. */
function readMetric(reader: ProtobufReader, end: number): DecodedMetric {
  let name = '';
  let unit = '';
  const data: { type: PointType; start: number; end: number }[] = [];
  while (reader.position < end) {
    const tag = reader.uint32();
    const type = DATA_TAGS[tag];
    if (tag === 10) name = reader.string(reader.end(end));
    else if (tag === 26) unit = reader.string(reader.end(end));
    else if (type !== undefined) {
      // Read once name and unit are known: protobuf allows them after the data.
      const dataEnd = reader.end(end);
      data.push({ type, start: reader.position, end: dataEnd });
      reader.position = dataEnd;
    } else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  const points: Point[] = [];
  for (const { type, start, end: dataEnd } of data) {
    reader.position = start;
    readData(reader, dataEnd, type, name, unit, points);
  }
  reader.position = end;
  return { points, resource: UNSET_RESOURCE, scope: UNSET_SCOPE };
}

/** `Metric` fields 5 gauge, 7 sum and 9 histogram (length-delimited). */
const DATA_TAGS: Readonly<Record<number, PointType>> = { 42: 'gauge', 58: 'sum', 74: 'histogram' };

/** `Gauge`, `Sum` or `Histogram`: field 1 holds the data points; the rest is skipped. */
function readData(
  reader: ProtobufReader,
  end: number,
  type: PointType,
  name: string,
  unit: string,
  points: Point[],
): void {
  const first = points.length;
  let temporality: Point['temporality'];
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 16) {
      // aggregation_temporality, after the points on the wire: set on them below.
      temporality = temporalityOf(reader.uint32());
      continue;
    }
    if (tag !== 10) {
      reader.skip(tag & 7, end);
      continue;
    }
    const pointEnd = reader.end(end);
    points.push(
      type === 'histogram'
        ? readHistogramPoint(reader, pointEnd, name, unit)
        : readNumberPoint(reader, pointEnd, type, name, unit),
    );
  }
  reader.expectEnd(end);
  if (type !== 'gauge') {
    for (let index = first; index < points.length; index += 1) {
      points[index] = { ...points[index]!, temporality };
    }
  }
}

/** `NumberDataPoint`: attributes (7) and `as_double` (4) or `as_int` (6, sfixed64). */
function readNumberPoint(
  reader: ProtobufReader,
  end: number,
  type: PointType,
  name: string,
  unit: string,
): Point {
  const attributes: Record<string, PlainValue> = {};
  let value: number | undefined;
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 58) readKeyValue(reader, reader.end(end), attributes);
    else if (tag === 33) value = reader.double();
    else if (tag === 49) value = Number(BigInt.asIntN(64, reader.fixed64()));
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return { name, unit, type, attributes, count: undefined, value, temporality: undefined };
}

/** `HistogramDataPoint`: attributes (9), count (4, fixed64) and sum (5, double). */
function readHistogramPoint(
  reader: ProtobufReader,
  end: number,
  name: string,
  unit: string,
): Point {
  const attributes: Record<string, PlainValue> = {};
  let count = 0;
  let sum: number | undefined;
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 74) readKeyValue(reader, reader.end(end), attributes);
    else if (tag === 33) count = Number(reader.fixed64());
    else if (tag === 41) sum = reader.double();
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return { name, unit, type: 'histogram', attributes, count, value: sum, temporality: undefined };
}

/** OTLP's `AggregationTemporality`: 1 delta, 2 cumulative (0, unspecified, as none). */
export function temporalityOf(value: unknown): Point['temporality'] {
  if (value === 1 || value === 'AGGREGATION_TEMPORALITY_DELTA') return 'delta';
  if (value === 2 || value === 'AGGREGATION_TEMPORALITY_CUMULATIVE') return 'cumulative';
  return undefined;
}
