import type { ToolCall, ToolResult, ToolStreamBase } from '../../events/index.js';
import { fieldsOf, text } from '../loose-fields.js';

/**
 * Reading tool payloads as the typed payloads of the events module (`ToolCall`, `ToolResult`,
 * `ToolStreamBase`), in their one spelling: the wire decoder has already turned a journal's Go or
 * snake_case keys into it. A payload on the bus is still unchecked data, so anything missing or of
 * the wrong type reads as empty, and a malformed payload yields a span rather than an error.
 */

/** The fields of a `tool.invoke` payload tooltrace uses. */
export interface InvokeFields {
  callId: string;
  name: string;
  arguments: unknown;
  turnId: string;
  parentCallId: string;
  /** What the tool does, when the invoke says (`description`); `''` otherwise. */
  description: string;
  /** Span attributes the invoke carries (`attributes`), unchecked. */
  attributes: unknown;
}

/** The fields of a `tool.result` payload tooltrace uses. */
export interface ResultFields {
  callId: string;
  name: string;
  /** The output: `output` when non-empty, else `outputStructured`. */
  output: unknown;
  /** The error message; `''` on success. */
  error: string;
  /** A name for the kind of error, when the result carries one (`errorType`). */
  errorType: string;
  cancelled: boolean;
  turnId: string;
  /** Span attributes the result carries (`attributes`), unchecked. */
  attributes: unknown;
}

/** The fields of a `tool.invoke` payload. */
export function readInvoke(payload: unknown): InvokeFields {
  const fields = fieldsOf<ToolCall>(payload);
  return {
    callId: text(fields.id),
    name: text(fields.name),
    arguments: fields.arguments,
    turnId: text(fields.turnId),
    parentCallId: text(fields.parentCallId),
    description: text(fields.description),
    attributes: fields.attributes,
  };
}

/** The fields of a `tool.result` payload. */
export function readResult(payload: unknown): ResultFields {
  const fields = fieldsOf<ToolResult>(payload);
  const output = fields.output;
  return {
    callId: text(fields.id),
    name: text(fields.name),
    output: output === undefined || output === '' ? (fields.outputStructured ?? output) : output,
    error: text(fields.error),
    errorType: text(fields.errorType),
    cancelled: fields.cancelled === true,
    turnId: text(fields.turnId),
    attributes: fields.attributes,
  };
}

/** The tool call id a `tool.stream.*` payload names (`tool_id`). */
export function streamCallId(payload: unknown): string {
  const value = fieldsOf<ToolStreamBase>(payload).tool_id;
  return typeof value === 'string' ? value : '';
}

/** The tool name a `tool.stream.*` payload names (`tool_name`). */
export function streamToolName(payload: unknown): string {
  const value = fieldsOf<ToolStreamBase>(payload).tool_name;
  return typeof value === 'string' ? value : '';
}

/** The turn a `tool.stream.*` payload names (`turn_id`), `undefined` when it names none. */
export function streamTurnId(payload: unknown): string | undefined {
  const value = fieldsOf<ToolStreamBase>(payload).turn_id;
  return typeof value === 'string' ? value : undefined;
}
