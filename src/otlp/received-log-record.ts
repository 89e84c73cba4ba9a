import type { OtlpEncoding } from './otlp-encoding.js';
import type { ReceivedScope } from './received-scope.js';

/**
 * One log record as an OTLP receiver got it, decoded into plain values for assertions. Times are
 * nanoseconds since the Unix epoch (`0n` when unknown); `severityNumber` is the OTLP enum number
 * (9 INFO, 13 WARN, 17 ERROR, …); `body` and attribute values are decoded as span attributes
 * are; `traceId`/`spanId` are lowercase hex, `''` when the record belongs to no span.
 */
export interface ReceivedLogRecord {
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  severityNumber: number;
  severityText: string;
  body: unknown;
  attributes: Record<string, unknown>;
  droppedAttributesCount: number;
  /** W3C trace flags in the low 8 bits. */
  flags: number;
  traceId: string;
  spanId: string;
  eventName: string;
  /** Attributes of the resource the record belongs to. */
  resource: Record<string, unknown>;
  scope: ReceivedScope;
  /** How the request that carried the record was encoded. */
  encoding: OtlpEncoding;
}
