import type { Attributes, HrTime } from '@opentelemetry/api';
import type { MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { ProtobufWriter } from './protobuf-writer.js';
import { INT64_MAX, INT64_MIN } from './span-encoding.js';

/** `DataPointType`, `AggregationTemporality` and `ValueType` of the SDK, by number: a type import keeps the SDK unloaded. */
const HISTOGRAM = 0;
const EXPONENTIAL_HISTOGRAM = 1;
const GAUGE = 2;
const SUM = 3;
const SDK_DELTA = 0;
const VALUE_INT = 0;
/** OTLP's `AggregationTemporality`. */
const OTLP_DELTA = 1;
const OTLP_CUMULATIVE = 2;

/** One field of a message, by its protobuf number and its OTLP/JSON name. */
interface Field {
  readonly number: number;
  readonly name: string;
  readonly value: FieldValue;
  /**
   * Written even at its default value: proto3 `optional` (a histogram's sum, min, max) and
   * `oneof` members (a point's `as_int` of 0).
   */
  readonly optional?: boolean;
}

/** A field's value, by how both formats spell it. */
type FieldValue =
  | { readonly kind: 'string'; readonly value: string }
  /** An enum or a `uint32`: a varint, a JSON number. */
  | { readonly kind: 'uint'; readonly value: number }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'double'; readonly value: number }
  /** A `fixed64` (times, counts): a JSON string. */
  | { readonly kind: 'fixed64'; readonly value: bigint }
  /** An `int64` (`AnyValue.int_value`): a varint, a JSON string. */
  | { readonly kind: 'int64'; readonly value: number }
  /** An `sfixed64` (`NumberDataPoint.as_int`): a JSON string. */
  | { readonly kind: 'sfixed64'; readonly value: number }
  /** A `sint32` (exponential histogram scale and offsets): zigzag, a JSON number. */
  | { readonly kind: 'sint32'; readonly value: number }
  | { readonly kind: 'message'; readonly fields: readonly Field[] }
  /** Repeated `fixed64` (bucket counts), packed: JSON strings. */
  | { readonly kind: 'fixed64s'; readonly values: readonly number[] }
  /** Repeated `uint64` (exponential bucket counts), packed: JSON strings. */
  | { readonly kind: 'uint64s'; readonly values: readonly number[] }
  /** Repeated `double` (bounds), packed. */
  | { readonly kind: 'doubles'; readonly values: readonly number[] };

/** The formats an OTLP metrics request is written in. */
export type OtlpMetricsFormat = 'protobuf' | 'json';

/**
 * Encodes the metrics an SDK reader collected as an OTLP `ExportMetricsServiceRequest`, in
 * protobuf or OTLP/JSON: the request is walked once into its fields (the messages the stock
 * `ProtobufMetricsSerializer` and `JsonMetricsSerializer` write: sums, gauges, histograms and
 * exponential histograms, int points as `as_int`, temporality in OTLP's numbers), and the fields
 * written in the format asked for. Fields at their default value are left out, as proto3 does.
 * Metrics go out once per collection: this is written for being right and small, not fast
 * (the trace encoders are the fast ones). Its `serializeRequest` is the stock serializers'
 * shape, so the sidecar's metric exporter takes either.
 */
export class OtlpMetricsEncoder {
  readonly #format: OtlpMetricsFormat;

  constructor(format: OtlpMetricsFormat) {
    this.#format = format;
  }

  /** The request body for `metrics`. */
  serializeRequest(metrics: ResourceMetrics): Buffer {
    const request = [
      { number: 1, name: 'resourceMetrics', value: message(resourceMetricsFields(metrics)) },
    ];
    return this.#format === 'protobuf'
      ? protobufOf(request)
      : Buffer.from(JSON.stringify(jsonOf(request)), 'utf8');
  }
}

function message(fields: readonly Field[]): FieldValue {
  return { kind: 'message', fields };
}

function string(number: number, name: string, value: string | undefined): Field[] {
  return value === undefined ? [] : [{ number, name, value: { kind: 'string', value } }];
}

function resourceMetricsFields(metrics: ResourceMetrics): Field[] {
  return [
    {
      number: 1,
      name: 'resource',
      value: message(attributeFields(1, metrics.resource.attributes)),
    },
    ...metrics.scopeMetrics.map((scopeMetrics): Field => ({
      number: 2,
      name: 'scopeMetrics',
      value: message([
        {
          number: 1,
          name: 'scope',
          value: message([
            ...string(1, 'name', scopeMetrics.scope.name),
            ...string(2, 'version', scopeMetrics.scope.version),
          ]),
        },
        ...scopeMetrics.metrics.map((metric): Field => ({
          number: 2,
          name: 'metrics',
          value: message(metricFields(metric)),
        })),
        ...string(3, 'schemaUrl', scopeMetrics.scope.schemaUrl),
      ]),
    })),
    ...string(3, 'schemaUrl', metrics.resource.schemaUrl),
  ];
}

function metricFields(metric: MetricData): Field[] {
  const fields = [
    ...string(1, 'name', metric.descriptor.name),
    ...string(2, 'description', metric.descriptor.description),
    ...string(3, 'unit', metric.descriptor.unit),
  ];
  const temporality: Field = {
    number: 2,
    name: 'aggregationTemporality',
    value: {
      kind: 'uint',
      value: (metric.aggregationTemporality as number) === SDK_DELTA ? OTLP_DELTA : OTLP_CUMULATIVE,
    },
  };
  const type = metric.dataPointType as number;
  if (type === SUM || type === GAUGE) {
    const int = (metric.descriptor.valueType as number) === VALUE_INT;
    const points = metric.dataPoints.map((point): Field => ({
      number: 1,
      name: 'dataPoints',
      value: message([
        ...attributeFields(7, point.attributes),
        time(2, 'startTimeUnixNano', point.startTime),
        time(3, 'timeUnixNano', point.endTime),
        int
          ? {
              number: 6,
              name: 'asInt',
              optional: true,
              value: { kind: 'sfixed64', value: point.value as number },
            }
          : {
              number: 4,
              name: 'asDouble',
              optional: true,
              value: { kind: 'double', value: point.value as number },
            },
      ]),
    }));
    if (type === GAUGE) fields.push({ number: 5, name: 'gauge', value: message(points) });
    else {
      const isMonotonic = (metric as { isMonotonic?: boolean }).isMonotonic === true;
      fields.push({
        number: 7,
        name: 'sum',
        value: message([
          ...points,
          temporality,
          { number: 3, name: 'isMonotonic', value: { kind: 'bool', value: isMonotonic } },
        ]),
      });
    }
  } else if (type === HISTOGRAM) {
    const points = metric.dataPoints.map((point): Field => {
      const histogram = point.value as {
        buckets: { boundaries: number[]; counts: number[] };
        count: number;
        sum?: number;
        min?: number;
        max?: number;
      };
      return {
        number: 1,
        name: 'dataPoints',
        value: message([
          ...attributeFields(9, point.attributes),
          time(2, 'startTimeUnixNano', point.startTime),
          time(3, 'timeUnixNano', point.endTime),
          {
            number: 4,
            name: 'count',
            value: { kind: 'fixed64', value: BigInt(histogram.count) },
          },
          ...optionalDouble(5, 'sum', histogram.sum),
          {
            number: 6,
            name: 'bucketCounts',
            value: { kind: 'fixed64s', values: histogram.buckets.counts },
          },
          {
            number: 7,
            name: 'explicitBounds',
            value: { kind: 'doubles', values: histogram.buckets.boundaries },
          },
          ...optionalDouble(11, 'min', histogram.min),
          ...optionalDouble(12, 'max', histogram.max),
        ]),
      };
    });
    fields.push({ number: 9, name: 'histogram', value: message([...points, temporality]) });
  } else if (type === EXPONENTIAL_HISTOGRAM) {
    const points = metric.dataPoints.map((point): Field => {
      const histogram = point.value as {
        count: number;
        sum?: number;
        min?: number;
        max?: number;
        scale: number;
        zeroCount: number;
        positive: { offset: number; bucketCounts: number[] };
        negative: { offset: number; bucketCounts: number[] };
      };
      const buckets = (number: number, name: string, side: typeof histogram.positive): Field => ({
        number,
        name,
        value: message([
          { number: 1, name: 'offset', value: { kind: 'sint32', value: side.offset } },
          {
            number: 2,
            name: 'bucketCounts',
            value: { kind: 'uint64s', values: side.bucketCounts },
          },
        ]),
      });
      return {
        number: 1,
        name: 'dataPoints',
        value: message([
          ...attributeFields(1, point.attributes),
          time(2, 'startTimeUnixNano', point.startTime),
          time(3, 'timeUnixNano', point.endTime),
          {
            number: 4,
            name: 'count',
            value: { kind: 'fixed64', value: BigInt(histogram.count) },
          },
          ...optionalDouble(5, 'sum', histogram.sum),
          { number: 6, name: 'scale', value: { kind: 'sint32', value: histogram.scale } },
          {
            number: 7,
            name: 'zeroCount',
            value: { kind: 'fixed64', value: BigInt(histogram.zeroCount) },
          },
          buckets(8, 'positive', histogram.positive),
          buckets(9, 'negative', histogram.negative),
          ...optionalDouble(12, 'min', histogram.min),
          ...optionalDouble(13, 'max', histogram.max),
        ]),
      };
    });
    fields.push({
      number: 10,
      name: 'exponentialHistogram',
      value: message([...points, temporality]),
    });
  }
  return fields;
}

function optionalDouble(number: number, name: string, value: number | undefined): Field[] {
  return value === undefined
    ? []
    : [{ number, name, value: { kind: 'double', value }, optional: true }];
}

function time(number: number, name: string, value: HrTime): Field {
  return {
    number,
    name,
    value: { kind: 'fixed64', value: BigInt(value[0]) * 1_000_000_000n + BigInt(value[1]) },
  };
}

/** `KeyValue`s in field `number`; `undefined` and `null` values are left out. */
function attributeFields(number: number, attributes: Attributes): Field[] {
  const fields: Field[] = [];
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null) continue;
    fields.push({
      number,
      name: 'attributes',
      value: message([
        { number: 1, name: 'key', value: { kind: 'string', value: key } },
        { number: 2, name: 'value', value: message(anyValueFields(value)) },
      ]),
    });
  }
  return fields;
}

/** An `AnyValue`: numbers are ints when whole and within int64, as the stock serializers write them. */
function anyValueFields(value: unknown): Field[] {
  if (typeof value === 'string') {
    return [{ number: 1, name: 'stringValue', value: { kind: 'string', value }, optional: true }];
  }
  if (typeof value === 'boolean') {
    return [{ number: 2, name: 'boolValue', value: { kind: 'bool', value }, optional: true }];
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= INT64_MIN && value < INT64_MAX
      ? [{ number: 3, name: 'intValue', value: { kind: 'int64', value }, optional: true }]
      : [{ number: 4, name: 'doubleValue', value: { kind: 'double', value }, optional: true }];
  }
  if (Array.isArray(value)) {
    const values = value.map((item: unknown): Field => ({
      number: 1,
      name: 'values',
      value: message(item === undefined || item === null ? [] : anyValueFields(item)),
    }));
    return [{ number: 5, name: 'arrayValue', value: message(values), optional: true }];
  }
  return [];
}

/** Whether a field is at its default value, which proto3 leaves out. */
function isDefault(field: Field): boolean {
  if (field.optional === true) return false;
  const value = field.value;
  switch (value.kind) {
    case 'string':
      return value.value === '';
    case 'bool':
      return !value.value;
    case 'fixed64':
      return value.value === 0n;
    case 'message':
      return false;
    case 'fixed64s':
    case 'uint64s':
    case 'doubles':
      return value.values.length === 0;
    default:
      return value.value === 0;
  }
}

/** `fields` as protobuf, by the one {@link ProtobufWriter}. */
function protobufOf(fields: readonly Field[]): Buffer {
  const writer = new ProtobufWriter();
  writeFields(writer, fields);
  return writer.bytes();
}

function writeFields(writer: ProtobufWriter, fields: readonly Field[]): void {
  for (const field of fields) {
    if (isDefault(field)) continue;
    const value = field.value;
    const number = field.number;
    switch (value.kind) {
      case 'string':
        writer.string(number, value.value);
        break;
      case 'uint':
      case 'int64':
        writer.varintField(number, value.value);
        break;
      case 'bool':
        writer.varintField(number, value.value ? 1 : 0);
        break;
      case 'sint32':
        writer.sint32Field(number, value.value);
        break;
      case 'double':
        writer.doubleField(number, value.value);
        break;
      case 'fixed64':
        writer.fixed64Field(number, value.value);
        break;
      case 'sfixed64':
        writer.fixed64Field(number, BigInt(Math.trunc(value.value)));
        break;
      case 'message': {
        const mark = writer.begin(number);
        writeFields(writer, value.fields);
        writer.end(mark);
        break;
      }
      case 'fixed64s': {
        const mark = writer.begin(number);
        for (const count of value.values) writer.fixed64(BigInt(count));
        writer.end(mark);
        break;
      }
      case 'uint64s': {
        const mark = writer.begin(number);
        for (const count of value.values) {
          writer.ensure(10);
          writer.varint(count);
        }
        writer.end(mark);
        break;
      }
      case 'doubles': {
        const mark = writer.begin(number);
        for (const bound of value.values) writer.double(bound);
        writer.end(mark);
        break;
      }
    }
  }
}

/** The OTLP/JSON object of `fields`: repeated fields as arrays, 64-bit integers as strings. */
function jsonOf(fields: readonly Field[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const field of fields) {
    if (isDefault(field)) continue;
    const value = jsonValueOf(field.value);
    if (isRepeated(field)) ((object[field.name] ??= []) as unknown[]).push(value);
    else object[field.name] = value;
  }
  return object;
}

/** The message fields that OTLP declares `repeated`: every list of messages in a request. */
const REPEATED = new Set([
  'resourceMetrics',
  'scopeMetrics',
  'metrics',
  'dataPoints',
  'attributes',
  'values',
]);

function isRepeated(field: Field): boolean {
  return field.value.kind === 'message' && REPEATED.has(field.name);
}

function jsonValueOf(value: FieldValue): unknown {
  switch (value.kind) {
    case 'string':
    case 'bool':
    case 'uint':
    case 'sint32':
      return value.value;
    case 'double':
      return jsonDouble(value.value);
    case 'fixed64':
      return value.value.toString();
    case 'int64':
    case 'sfixed64':
      return Number.isSafeInteger(value.value)
        ? String(value.value)
        : BigInt(Math.trunc(value.value)).toString();
    case 'message':
      return jsonOf(value.fields);
    case 'fixed64s':
    case 'uint64s':
      return value.values.map((count) => String(count));
    case 'doubles':
      return value.values.map(jsonDouble);
  }
}

/** A double as JSON writes it, or the string protobuf's JSON mapping has for NaN and Infinity. */
function jsonDouble(value: number): number | string {
  return Number.isFinite(value) ? value : String(value);
}
