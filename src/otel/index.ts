/**
 * Entry point `tooltrace/otel`: the OpenTelemetry subscriber that turns tool calls on the bus
 * into spans. Depends on `@opentelemetry/api` only; the application brings the SDK.
 */
export { traceToolCalls } from './trace-tool-calls.js';
export type { ToolCallTracing } from './trace-tool-calls.js';
export type { StreamEventsAs, TraceBy, TraceToolCallsOptions } from './options.js';
export type { AgentTracingStats } from './agent-tracer.js';
export type { ToolCallTracingStats } from './tracing-stats.js';
export { DerivedIdGenerator } from './derived-id-generator.js';
export { redactCredentials } from './redact.js';
export type { RedactHook } from './redact.js';
export { truncateUtf8 } from './content-capture.js';
export { hrTimeFromUnixNano } from './hr-time.js';
export type { SwallowedErrorKind } from './error-reporter.js';
export {
  ATTR_DEPTH,
  ATTR_END_REASON,
  ATTR_ERROR_TYPE,
  ATTR_EVENT_ID,
  ATTR_EVENT_PARENT_ID,
  ATTR_EVENT_SEQUENCE,
  ATTR_EVENT_SOURCE,
  ATTR_EXCEPTION_MESSAGE,
  ATTR_EXCEPTION_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_INFLIGHT,
  ATTR_INFLIGHT_UPDATE,
  ATTR_INFLIGHT_UPDATES,
  ATTR_INVOKE_LATE,
  ATTR_INVOKE_MISSING,
  ATTR_PARENT_CALL_ID,
  ATTR_RESULT_EVENT_ID,
  ATTR_STREAM_EVENTS_COALESCED,
  ATTR_STREAM_EVENTS_RECORDED,
  ATTR_STREAM_LAST_PROGRESS,
  ATTR_STREAM_PARTIAL_BYTES,
  ATTR_STREAM_PARTIAL_COUNT,
  ATTR_STREAM_PAYLOAD,
  ATTR_STREAM_PAYLOAD_BYTES,
  ATTR_STREAM_PROGRESS,
  ATTR_STREAM_PROGRESS_COUNT,
  ATTR_STREAM_SEQUENCE,
  ATTR_STREAM_TIME_TO_FIRST_PARTIAL_MS,
  ATTR_TOOL_CANCELLED,
  ATTR_TURN_ID,
  ERROR_TYPE_ABANDONED,
  ERROR_TYPE_CANCELLED,
  ERROR_TYPE_OTHER,
  EVENT_EXCEPTION,
  EXECUTE_TOOL,
  INFLIGHT_NAME_SUFFIX,
  TOOL_TYPE_FUNCTION,
} from './attribute-names.js';
export type { EndReason } from './attribute-names.js';
