/**
 * Entry point `tooltrace/testing`: fakes for tests of code built on tooltrace. A real in-process
 * OTLP/HTTP receiver that decodes what exporters send into plain spans and log records, the
 * decoders it uses, and a bus subscriber that records every event.
 */
export { startOtlpReceiver } from './otlp-receiver.js';
export type {
  OtlpReceiver,
  OtlpReceiverOptions,
  ReceivedRequest,
  ScriptedAnswer,
} from './otlp-receiver.js';
export { startOtlpGrpcReceiver } from './otlp-grpc-receiver.js';
export type {
  GrpcScriptedAnswer,
  OtlpGrpcReceiver,
  ReceivedGrpcRequest,
} from './otlp-grpc-receiver.js';
export { ReceiverWaitError } from './receiver-wait-error.js';
export { decodeTraceRequest } from './decode-trace-request.js';
export { decodeLogsRequest } from './decode-logs-request.js';
export { decodeMetricsRequest } from './decode-metrics-request.js';
export { OtlpDecodeError } from './otlp-decode-error.js';
export { otlpEncodingOf } from './otlp-encoding.js';
export type { OtlpEncoding } from './otlp-encoding.js';
export type { ReceivedSpan, ReceivedSpanEvent, ReceivedSpanLink } from './received-span.js';
export type { ReceivedLogRecord } from './received-log-record.js';
export type { ReceivedMetricPoint } from './received-metric-point.js';
export type { ReceivedScope } from './received-scope.js';
export { RecordingSubscriber } from './recording-subscriber.js';
export type { RecordingSubscriberOptions } from './recording-subscriber.js';
