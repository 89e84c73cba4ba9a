import type { EventInit } from '../bus/index.js';
import type { DroppedField } from './dropped-field.js';
import type { DecodeWarning, RejectReason } from './reject-reason.js';

/**
 * A line {@link decodeEnvelope} accepted: `event` is ready for `bus.emitEvent`, with
 * `timeUnixNano` kept to the nanosecond and every causation field set (so the receiving bus never
 * fills one from its own dispatch context).
 */
export interface DecodeSuccess<T = unknown> {
  ok: true;
  event: EventInit<T>;
  /**
   * Whether the line carried an `event_id`. When it did not, `event.id` is left unset and the bus
   * assigns one; span pairing then has to go by tool call id instead.
   */
  hasEventId: boolean;
  /** The envelope's W3C `traceparent`, present only when it was valid. */
  traceparent?: string;
  /** Harmless problems found in the line; absent when there were none. */
  warnings?: DecodeWarning[];
  /**
   * Fields of the wrong type that do not identify the event, left out of `event`; absent when
   * there were none. Each names the field and what was wrong, for counting and a log line.
   */
  droppedFields?: DroppedField[];
}

/** A line {@link decodeEnvelope} rejected. It never throws for bad input; it returns this. */
export interface DecodeFailure {
  ok: false;
  /** Stable snake_case reason, fit for a metric label; one of `REJECT_REASONS`. */
  reason: RejectReason;
  /** What was wrong and in which field, for a log line. Never longer than a few hundred bytes. */
  message: string;
}

/** The outcome of {@link decodeEnvelope}: a tagged union, checked through `ok`. */
export type DecodeResult<T = unknown> = DecodeSuccess<T> | DecodeFailure;

/** A {@link DecodeFailure}; internal to wire. */
export function rejectLine(reason: RejectReason, message: string): DecodeFailure {
  return { ok: false, reason, message };
}

/** Whether a normaliser's result is a rejection rather than a payload; internal to wire. */
export function isDecodeFailure(value: unknown): value is DecodeFailure {
  return (
    typeof value === 'object' && value !== null && (value as Partial<DecodeFailure>).ok === false
  );
}
