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
export {
  decodeLogsRequest,
  decodeMetricsRequest,
  decodeTraceRequest,
  OtlpDecodeError,
  otlpEncodingOf,
} from '../otlp/read.js';
export type {
  OtlpEncoding,
  ReceivedLogRecord,
  ReceivedMetricPoint,
  ReceivedScope,
  ReceivedSpan,
  ReceivedSpanEvent,
  ReceivedSpanLink,
} from '../otlp/read.js';
export { RecordingSubscriber } from './recording-subscriber.js';
export type { RecordingSubscriberOptions } from './recording-subscriber.js';
