import type { OtlpEncoding } from './otlp-encoding.js';
import type { ReceivedScope } from './received-scope.js';

/** A span event as it arrived. */
export interface ReceivedSpanEvent {
  name: string;
  timeUnixNano: bigint;
  attributes: Record<string, unknown>;
}

/** A span link as it arrived. */
export interface ReceivedSpanLink {
  traceId: string;
  spanId: string;
  attributes: Record<string, unknown>;
}

/**
 * One span as an OTLP receiver got it, decoded into plain values for assertions. Ids are
 * lowercase hex (`''` when absent); times are nanoseconds since the Unix epoch; `kind` and
 * `status.code` are the OTLP enum numbers (kind 1 INTERNAL, 2 SERVER, 3 CLIENT, 4 PRODUCER,
 * 5 CONSUMER; status 0 UNSET, 1 OK, 2 ERROR). Attribute values are decoded as `decodeAnyValue`
 * does: int64 as a number when safe, else a bigint; bytes as `Uint8Array`; key-value lists as
 * plain objects.
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  /** W3C trace flags in the low 8 bits, plus the OTLP "parent is remote" bits. */
  flags: number;
  name: string;
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, unknown>;
  events: ReceivedSpanEvent[];
  links: ReceivedSpanLink[];
  status: { code: number; message: string };
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
  /** Attributes of the resource the span belongs to (`service.name` and so on). */
  resource: Record<string, unknown>;
  scope: ReceivedScope;
  /** How the request that carried the span was encoded. */
  encoding: OtlpEncoding;
}
