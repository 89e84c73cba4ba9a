/**
 * Every reason {@link decodeEnvelope} rejects a line for, in a stable order. The values are
 * snake_case and never change meaning, because they become Prometheus label values (a `reason`
 * label on a rejected-lines counter); a metrics layer can pre-register them so every series
 * exists from the start.
 *
 * - `not_json`: the line does not parse as JSON.
 * - `not_object`: it parses, but is not a JSON object.
 * - `missing_field`: a required field (`type`, `ts`, a tool payload's `id`/`name`, ...) is absent.
 * - `wrong_type`: a field that identifies the event (its type, envelope ids and sequence, or the
 *   call, request or spawn id that pairs it with its span) has the wrong type or an impossible
 *   value (`seq: -1`, `event_id: 7`). Other fields of the wrong type are dropped, not rejected
 *   (see `DecodeSuccess.droppedFields`).
 * - `too_large`: the line is longer than the byte limit (the {@link LineSplitter} reports these
 *   before any decoding).
 * - `too_deep`: objects and arrays nest deeper than the depth limit.
 * - `invalid_utf8`: the bytes are not valid UTF-8.
 * - `lone_surrogate`: a string holds an unpaired UTF-16 surrogate (from a `\ud800` escape).
 * - `bad_timestamp`: `ts` is not an RFC 3339 timestamp.
 * - `hostile_key`: an object anywhere in the line has a `__proto__` key, or a `constructor` or
 *   `prototype` key whose value is an object or array.
 */
export const REJECT_REASONS = [
  'not_json',
  'not_object',
  'missing_field',
  'wrong_type',
  'too_large',
  'too_deep',
  'invalid_utf8',
  'lone_surrogate',
  'bad_timestamp',
  'hostile_key',
] as const;

/** Why a line was rejected; one of {@link REJECT_REASONS}. */
export type RejectReason = (typeof REJECT_REASONS)[number];

/**
 * Every warning {@link decodeEnvelope} can attach to a line it accepted, in a stable order, for
 * the same metrics use as {@link REJECT_REASONS}.
 *
 * - `bad_traceparent`: the envelope's `traceparent` is not a valid W3C trace context header; it
 *   was ignored and the event decoded without it (a bad trace link must not lose a tool call).
 */
export const DECODE_WARNINGS = ['bad_traceparent'] as const;

/** Something wrong but harmless in a line that was accepted; one of {@link DECODE_WARNINGS}. */
export type DecodeWarning = (typeof DECODE_WARNINGS)[number];
