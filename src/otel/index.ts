/**
 * Entry point `tooltrace/otel`: the OpenTelemetry subscriber that turns tool calls on the bus
 * into spans. Depends on `@opentelemetry/api` only; the application brings the SDK. It exports
 * what a user calls and the types of its options and results; the attribute names are
 * documented in the README (and kept in attribute-names.ts), the helpers stay internal.
 */
export { traceToolCalls } from './trace-tool-calls.js';
export type { ToolCallTracing } from './trace-tool-calls.js';
export { traceReplay } from './trace-replay.js';
export type {
  LiveUpdatesOptions,
  ReplayTracingOptions,
  StreamEventsAs,
  TraceToolCallsOptions,
} from './options.js';
export type { TraceBy } from './trace-by.js';
export type { LoggerProviderLike, StreamLogger, StreamLogRecord } from './logger-provider.js';
export type { AgentTracingStats, ToolCallTracingStats } from './tracing-stats.js';
export { DerivedIdGenerator } from './derived-id-generator.js';
export { redactCredentials } from './redact.js';
export type { RedactHook } from './redact.js';
export type { SwallowedErrorKind } from './error-reporter.js';
export type { EndReason } from './attribute-names.js';
