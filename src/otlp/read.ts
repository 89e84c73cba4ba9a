/**
 * The half of `src/otlp` that needs no OpenTelemetry SDK, not even its types: the read model
 * (spans, log records, metric points as plain objects), the decoders of export requests in JSON
 * and protobuf, the protobuf reader and writer, and the reader and writer of what an endpoint
 * answers. `tooltrace/testing` imports only this, so its declarations type-check in a project
 * that installed `@opentelemetry/api` alone; the encoders of SDK spans are in `index.ts`.
 */
export type { ReceivedSpan, ReceivedSpanEvent, ReceivedSpanLink } from './received-span.js';
export type { ReceivedLogRecord } from './received-log-record.js';
export type { ReceivedMetricPoint } from './received-metric-point.js';
export type { ReceivedScope } from './received-scope.js';
export { decodeTraceRequest } from './decode-trace-request.js';
export { decodeLogsRequest } from './decode-logs-request.js';
export { decodeMetricsRequest } from './decode-metrics-request.js';
export { OtlpDecodeError } from './otlp-decode-error.js';
export { contentTypeOf, otlpEncodingOf } from './otlp-encoding.js';
export type { OtlpEncoding } from './otlp-encoding.js';
export { ProtobufReader, WIRE } from './protobuf-reader.js';
export { lengthDelimited, tag, varint } from './protobuf-writer.js';
export { ShortStringCache } from './short-string-cache.js';
export {
  decodePartialSuccess,
  decodeRetryInfoDelay,
  decodeRpcStatus,
  encodePartialSuccess,
  encodeRetryStatus,
  encodeRpcStatus,
} from './otlp-response.js';
export type { RpcStatus } from './otlp-response.js';
