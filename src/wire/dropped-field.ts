import { describeValue } from '../errors/index.js';

/**
 * A field {@link decodeEnvelope} left out of an accepted line because its value had a type the
 * field cannot have. Only fields that do not identify the event are dropped this way (the event
 * still ends or marks its span); a wrong identifying field (type, timestamp, envelope ids and
 * sequence, call id, request id, spawn id) rejects the line instead.
 */
export interface DroppedField {
  /**
   * Where the field is, as the line spelled it, with list positions left out so that the name
   * is fit for a metric label: `depth`, `payload.TokensUsed`, `payload.ToolCalls[].ID`.
   */
  field: string;
  /** What was wrong with it, for a log line: `payload.Iterations must be a finite number, got "3"`. */
  message: string;
}

/** A {@link DroppedField} made by a normaliser, told apart from a checked value by its class. */
export class WrongField implements DroppedField {
  constructor(
    readonly field: string,
    readonly message: string,
  ) {}
}

/**
 * The payload field `payload.{key}` of the wrong type, with what it must be; `at` names the
 * place in the message when it differs from the label (a list entry's index). Internal to wire.
 */
export function wrongPayloadField(
  key: string,
  expected: string,
  value: unknown,
  at = key,
): WrongField {
  return new WrongField(
    `payload.${key}`,
    `payload.${at} must be ${expected}, got ${describeValue(value)}`,
  );
}
