/**
 * Reading tool payloads as they arrive from the bus or from a journal: the TypeScript side's
 * camelCase fields (`id`, `name`, `arguments`, `turnId`, …) and the Go original's (`ID`,
 * `Name`, `Arguments`, `TurnID`, …). Anything missing or of the wrong type reads as empty, so a
 * malformed payload still yields a span rather than an error.
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

/** Both spellings of every field read here; named properties keep the reads fast. */
interface LoosePayload {
  id?: unknown;
  ID?: unknown;
  name?: unknown;
  Name?: unknown;
  arguments?: unknown;
  Arguments?: unknown;
  turnId?: unknown;
  TurnID?: unknown;
  parentCallId?: unknown;
  ParentCallID?: unknown;
  output?: unknown;
  Output?: unknown;
  outputStructured?: unknown;
  OutputStructured?: unknown;
  error?: unknown;
  Error?: unknown;
  errorType?: unknown;
  ErrorType?: unknown;
  cancelled?: unknown;
  Cancelled?: unknown;
  tool_id?: unknown;
  tool_name?: unknown;
  description?: unknown;
  Description?: unknown;
  attributes?: unknown;
  Attributes?: unknown;
}

const EMPTY: LoosePayload = {};

function fieldsOf(payload: unknown): LoosePayload {
  return payload !== null && typeof payload === 'object' ? payload : EMPTY;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** The fields of a `tool.invoke` payload. */
export function readInvoke(payload: unknown): InvokeFields {
  const fields = fieldsOf(payload);
  return {
    callId: text(fields.id ?? fields.ID),
    name: text(fields.name ?? fields.Name),
    arguments: fields.arguments ?? fields.Arguments,
    turnId: text(fields.turnId ?? fields.TurnID),
    parentCallId: text(fields.parentCallId ?? fields.ParentCallID),
    description: text(fields.description ?? fields.Description),
    attributes: fields.attributes ?? fields.Attributes,
  };
}

/** The fields of a `tool.result` payload. */
export function readResult(payload: unknown): ResultFields {
  const fields = fieldsOf(payload);
  const output = fields.output ?? fields.Output;
  const structured = fields.outputStructured ?? fields.OutputStructured;
  return {
    callId: text(fields.id ?? fields.ID),
    name: text(fields.name ?? fields.Name),
    output: output === undefined || output === '' ? (structured ?? output) : output,
    error: text(fields.error ?? fields.Error),
    errorType: text(fields.errorType ?? fields.ErrorType),
    cancelled: (fields.cancelled ?? fields.Cancelled) === true,
    turnId: text(fields.turnId ?? fields.TurnID),
    attributes: fields.attributes ?? fields.Attributes,
  };
}

/** The tool call id a `tool.stream.*` payload names (`tool_id`). */
export function streamCallId(payload: unknown): string {
  const fields = fieldsOf(payload);
  const value = fields.tool_id ?? fields.id;
  return typeof value === 'string' ? value : '';
}

/** The tool name a `tool.stream.*` payload names (`tool_name`). */
export function streamToolName(payload: unknown): string {
  const value = fieldsOf(payload).tool_name;
  return typeof value === 'string' ? value : '';
}
