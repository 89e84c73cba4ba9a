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
}

type Fields = Record<string, unknown>;

function fieldsOf(payload: unknown): Fields {
  return payload !== null && typeof payload === 'object' ? (payload as Fields) : {};
}

function text(fields: Fields, camel: string, go: string): string {
  const value = fields[camel] ?? fields[go];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** The fields of a `tool.invoke` payload. */
export function readInvoke(payload: unknown): InvokeFields {
  const fields = fieldsOf(payload);
  return {
    callId: text(fields, 'id', 'ID'),
    name: text(fields, 'name', 'Name'),
    arguments: fields['arguments'] ?? fields['Arguments'],
    turnId: text(fields, 'turnId', 'TurnID'),
    parentCallId: text(fields, 'parentCallId', 'ParentCallID'),
  };
}

/** The fields of a `tool.result` payload. */
export function readResult(payload: unknown): ResultFields {
  const fields = fieldsOf(payload);
  const output = fields['output'] ?? fields['Output'];
  const structured = fields['outputStructured'] ?? fields['OutputStructured'];
  const cancelled = fields['cancelled'] ?? fields['Cancelled'];
  return {
    callId: text(fields, 'id', 'ID'),
    name: text(fields, 'name', 'Name'),
    output: output === undefined || output === '' ? (structured ?? output) : output,
    error: text(fields, 'error', 'Error'),
    errorType: text(fields, 'errorType', 'ErrorType'),
    cancelled: cancelled === true,
    turnId: text(fields, 'turnId', 'TurnID'),
  };
}

/** The tool call id a `tool.stream.*` payload names (`tool_id`). */
export function streamCallId(payload: unknown): string {
  const fields = fieldsOf(payload);
  const value = fields['tool_id'] ?? fields['id'];
  return typeof value === 'string' ? value : '';
}

/** The tool name a `tool.stream.*` payload names (`tool_name`). */
export function streamToolName(payload: unknown): string {
  const value = fieldsOf(payload)['tool_name'];
  return typeof value === 'string' ? value : '';
}

/** The key a call is found by when events lack ids: session and tool call id. */
export function callKeyOf(sessionId: string, callId: string): string {
  return callId === '' ? '' : `${sessionId}\u0000${callId}`;
}
