import { createRequire } from 'node:module';
import type { Attributes, Context } from '@opentelemetry/api';
import { ConfigurationError } from '../errors/index.js';

/**
 * The part of an OpenTelemetry log record that tooltrace writes: the shape of `LogRecord` in
 * `@opentelemetry/api-logs`, written out here so that `tooltrace/otel` loads nothing but
 * `@opentelemetry/api` (the logs API is an optional peer, needed only for log records).
 */
export interface StreamLogRecord {
  eventName: string;
  timestamp: [number, number];
  /** `SeverityNumber.INFO` of the logs API. */
  severityNumber: number;
  attributes: Attributes;
  context: Context;
}

/** A logger: `Logger` of `@opentelemetry/api-logs`, as far as tooltrace uses it. */
export interface StreamLogger {
  emit(record: StreamLogRecord): void;
}

/**
 * Where stream log records go: any `LoggerProvider` of `@opentelemetry/api-logs` (the SDK's
 * `LoggerProvider`, or `logs.getLoggerProvider()`) fits this shape.
 */
export interface LoggerProviderLike {
  getLogger(name: string, version?: string): StreamLogger;
}

/**
 * The global logger provider of `@opentelemetry/api-logs`, read when log records are asked for
 * without a `loggerProvider`. The logs API is loaded only then, so an application that keeps
 * stream events as span events does not need it installed.
 */
export function globalLoggerProvider(): LoggerProviderLike {
  let logsApi: { logs: { getLoggerProvider(): LoggerProviderLike } };
  try {
    logsApi = createRequire(import.meta.url)('@opentelemetry/api-logs') as typeof logsApi;
  } catch (error) {
    throw new ConfigurationError(
      "streamEvents 'log-records' and 'both' need a loggerProvider option or the package " +
        '@opentelemetry/api-logs installed (for its global provider); neither was found',
      { setting: 'loggerProvider', cause: error },
    );
  }
  return logsApi.logs.getLoggerProvider();
}
