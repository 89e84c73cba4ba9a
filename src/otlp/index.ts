/**
 * OTLP, read and written in one place: the read model of what an exporter sends (spans, log
 * records, metric points as plain objects), one protobuf reader and one writer, the decoders of
 * trace, logs and metrics export requests in JSON and protobuf, the trace encoders (SDK spans to
 * protobuf and JSON request bodies, batch by batch), and the reader
 * of what an endpoint answers. `tooltrace/testing` (the receivers), the sidecar's export and
 * `view` import it; nothing else reads or writes OTLP by hand.
 * Internal: the package has no `./otlp` entry, `tooltrace/testing` re-exports what its users need.
 */
export type { ReceivedSpan, ReceivedSpanEvent, ReceivedSpanLink } from './received-span.js';
export type { ReceivedLogRecord } from './received-log-record.js';
export type { ReceivedMetricPoint } from './received-metric-point.js';
export type { ReceivedScope } from './received-scope.js';
export type { PlainValue } from './any-value.js';
export { decodeTraceRequest } from './decode-trace-request.js';
export { decodeLogsRequest } from './decode-logs-request.js';
export { decodeMetricsRequest } from './decode-metrics-request.js';
export { decodeTraceProtobuf } from './decode-trace-protobuf.js';
export { OtlpDecodeError } from './otlp-decode-error.js';
export { contentTypeOf, otlpEncodingOf } from './otlp-encoding.js';
export type { OtlpEncoding } from './otlp-encoding.js';
export { ProtobufReader, WIRE } from './protobuf-reader.js';
export {
  FIXED32,
  FIXED64,
  hexValue,
  LENGTH_DELIMITED,
  lengthDelimited,
  protobufMessage,
  stringKeyValue,
  tag,
  VARINT,
  varint,
  varintSize,
} from './protobuf-writer.js';
export { ShortStringCache } from './short-string-cache.js';
export {
  decodePartialSuccess,
  decodeRetryInfoDelay,
  decodeRpcStatus,
  encodePartialSuccess,
  encodeRetryStatus,
  encodeRpcStatus,
} from './otlp-response.js';
export type { PartialSuccess, RpcStatus } from './otlp-response.js';
export { OtlpTraceEncoder } from './otlp-trace-encoder.js';
export { OtlpJsonTraceEncoder } from './otlp-json-encoder.js';
export { NumberTypes } from './number-types.js';
export { encodeAll } from './span-batch.js';
export type { SpanBatch } from './span-batch.js';
