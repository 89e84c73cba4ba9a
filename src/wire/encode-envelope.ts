import { unixNanoFromDate, type BusEvent } from '../bus/index.js';
import { formatRfc3339Nano } from './rfc3339.js';
import { isValidTraceparent } from './traceparent.js';
import { isWellFormed, toWellFormed } from './well-formed.js';

/** Options for {@link encodeEnvelope}. */
export interface EncodeOptions {
  /**
   * W3C `traceparent` to carry on the line, so a sidecar can continue the trace the event was
   * emitted in. Must be valid (see `isValidTraceparent`).
   */
  traceparent?: string;
}

/**
 * The NDJSON envelope line for a bus event, without a trailing newline. Keys follow the Nexus
 * journal, in this order: `seq` (`causation.sequence`), `ts` (RFC 3339 in UTC with every
 * significant nanosecond of `timeUnixNano`, Go's `RFC3339Nano` form), `type`, `event_id`,
 * `source` (only when set), `parent_id`, `parent_seq`, `session_id`, `agent_id`, `depth`,
 * `payload` (as `JSON.stringify` writes it; left out when `undefined`), then `traceparent` when
 * given. {@link decodeEnvelope} gives back every field.
 *
 * Strings with an unpaired surrogate, which the decoder would reject, are written with U+FFFD in
 * its place. The decoder still refuses a line over its size or depth limit, or whose payload has
 * a key it treats as hostile (`__proto__`, or `constructor`/`prototype` holding an object); those
 * are left to the producer, as checking them here would cost every event a walk of its payload.
 *
 * Throws a `TypeError` when the payload cannot be JSON (a bigint, a cycle) or `traceparent` is
 * invalid, and a `RangeError` for a time outside years 0000–9999: a forwarder must catch these
 * and count the event as dropped rather than let them reach the bus.
 */
export function encodeEnvelope(event: BusEvent, options?: EncodeOptions): string {
  const traceparent = options?.traceparent;
  if (traceparent !== undefined && !isValidTraceparent(traceparent)) {
    throw new TypeError(
      `traceparent is not a valid W3C traceparent: ${JSON.stringify(traceparent)}`,
    );
  }
  const causation = event.causation;
  const timeUnixNano =
    typeof event.timeUnixNano === 'bigint' ? event.timeUnixNano : unixNanoFromDate(event.timestamp);
  const envelope = {
    seq: causation.sequence,
    ts: formatRfc3339Nano(timeUnixNano),
    type: event.type,
    event_id: event.id,
    source: event.source,
    parent_id: causation.parentId,
    parent_seq: causation.parentSeq,
    session_id: causation.sessionId,
    agent_id: causation.agentId,
    depth: causation.depth,
    payload: event.payload,
    traceparent,
  };
  const line = JSON.stringify(envelope);
  // JSON.stringify writes a lone surrogate as a `\udXXX` escape and never escapes a valid pair.
  return line.includes('\\ud') ? JSON.stringify(envelope, replaceLoneSurrogates) : line;
}

function replaceLoneSurrogates(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return isWellFormed(value) ? value : toWellFormed(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.every(isWellFormed)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    Object.defineProperty(copy, toWellFormed(key), {
      value: record[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}
