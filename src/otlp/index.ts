/**
 * OTLP, read and written in one place: the read model of what an exporter sends (spans, log
 * records, metric points as plain objects), one protobuf reader ({@link ProtobufReader}) and
 * one writer ({@link ProtobufWriter}: the trace format and the metrics encoder write through it,
 * and the small messages encoded once), the decoders of
 * trace, logs and metrics export requests in JSON and protobuf, the trace encoders (SDK spans to
 * protobuf and JSON request bodies, batch by batch), and the reader
 * of what an endpoint answers. `tooltrace/testing` (the receivers), the sidecar's export and
 * `view` import it; nothing else reads or writes OTLP by hand.
 * Internal: the package has no `./otlp` entry, `tooltrace/testing` re-exports what its users need.
 */
export {
  decodeTraceRequest,
  decodeLogsRequest,
  decodeMetricsRequest,
  OtlpDecodeError,
  contentTypeOf,
  otlpEncodingOf,
  ProtobufReader,
  WIRE,
  lengthDelimited,
  tag,
  varint,
  ShortStringCache,
  decodePartialSuccess,
  decodeRetryInfoDelay,
  decodeRpcStatus,
  encodePartialSuccess,
  encodeRetryStatus,
  encodeRpcStatus,
} from './read.js';
export type {
  ReceivedSpan,
  ReceivedSpanEvent,
  ReceivedSpanLink,
  ReceivedLogRecord,
  ReceivedMetricPoint,
  ReceivedScope,
  OtlpEncoding,
  RpcStatus,
} from './read.js';
export { OtlpTraceEncoder } from './otlp-trace-encoder.js';
export { OtlpJsonTraceEncoder } from './otlp-json-encoder.js';
export { NumberTypes } from './number-types.js';
export type { SpanBatch } from './span-batch.js';
