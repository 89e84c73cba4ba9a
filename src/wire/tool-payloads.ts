import type { ToolAttributes, ToolCall, ToolResult } from '../events/index.js';
import { rejectLine, type DecodeFailure } from './decode-result.js';
import { describeValue } from './describe-value.js';
import { wrongPayloadField as wrongType, type DroppedField } from './dropped-field.js';

type JsonObject = Record<string, unknown>;

/** Longest message read from an `error` that is not a string. */
const MAX_ERROR_TEXT = 200;

/**
 * The `tool.invoke` payload of a line as a {@link ToolCall}. Accepts the TypeScript side's own
 * camelCase keys and the Go implementation's (`ID`, `Name`, `Arguments`, `TurnID`,
 * `ParentCallID`, `Description`; `_schema_version` and `Sequence` are ignored). `id` and `name`
 * are required non-empty strings (they say which call of which tool this is: anything else
 * rejects the line); `arguments` of `null` (Go's nil map) becomes `{}`; an empty `turnId`,
 * `parentCallId` or `description` is left out. `arguments`, `turnId`, `parentCallId`,
 * `description` or `attributes` (an object; the tracer checks its values) of another type is
 * left out and added to `dropped`. Internal to wire.
 */
export function normalizeToolCall(
  payload: unknown,
  dropped: DroppedField[],
): ToolCall | DecodeFailure {
  const problem = checkPayloadObject(payload, 'tool.invoke');
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const id = requiredString(object, 'id', 'ID');
  if (typeof id !== 'string') return id;
  const name = requiredString(object, 'name', 'Name');
  if (typeof name !== 'string') return name;

  const argumentsKey = object.arguments !== undefined ? 'arguments' : 'Arguments';
  const argumentsValue = object[argumentsKey];
  let toolArguments: JsonObject = {};
  if (isObject(argumentsValue)) toolArguments = argumentsValue;
  else if (argumentsValue !== undefined && argumentsValue !== null) {
    dropped.push(wrongType(argumentsKey, 'an object', argumentsValue));
  }

  const call: ToolCall = { id, name, arguments: toolArguments };
  const turnId = optionalString(object, 'turnId', 'TurnID', dropped);
  if (turnId !== undefined) call.turnId = turnId;
  const parentCallId = optionalString(object, 'parentCallId', 'ParentCallID', dropped);
  if (parentCallId !== undefined) call.parentCallId = parentCallId;
  const description = optionalString(object, 'description', 'Description', dropped);
  if (description !== undefined) call.description = description;
  const attributes = optionalObject(object, 'attributes', 'Attributes', dropped);
  if (attributes !== undefined) call.attributes = attributes as ToolAttributes;
  return call;
}

/**
 * The `tool.result` payload of a line as a {@link ToolResult}, from camelCase or Go keys
 * (`ID`, `Name`, `Output`, `Error`, `ErrorType`, `TurnID`, `OutputStructured`; Go's `OutputFile`
 * and `OutputData` have no place in a `ToolResult` and are dropped). `id` must be a non-empty
 * string (it pairs the result with its call: anything else rejects the line); a missing
 * `output` is `''`; an empty `error`, `errorType` or `turnId` and a `null` `outputStructured`
 * are left out. `name`, `output`, `cancelled`, `errorType`, `turnId` or `attributes` (an object)
 * of another type is left out (`name` and `output` become `''`) and added to `dropped`; an
 * `error` that is not a string still marks the call failed, with the value's JSON as its
 * message. Internal to wire.
 */
export function normalizeToolResult(
  payload: unknown,
  dropped: DroppedField[],
): ToolResult | DecodeFailure {
  const problem = checkPayloadObject(payload, 'tool.result');
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const id = requiredString(object, 'id', 'ID');
  if (typeof id !== 'string') return id;

  const nameKey = object.name !== undefined ? 'name' : 'Name';
  const name = object[nameKey] ?? '';
  const outputKey = object.output !== undefined ? 'output' : 'Output';
  const output = object[outputKey] ?? '';
  const result: ToolResult = {
    id,
    name: typeof name === 'string' ? name : dropString(nameKey, name, dropped),
    output: typeof output === 'string' ? output : dropString(outputKey, output, dropped),
  };
  const error = readError(object);
  if (error !== undefined) result.error = error;
  const errorType = optionalString(object, 'errorType', 'ErrorType', dropped);
  if (errorType !== undefined) result.errorType = errorType;
  const cancelled = object.cancelled;
  if (typeof cancelled === 'boolean') result.cancelled = cancelled;
  else if (cancelled !== undefined && cancelled !== null) {
    dropped.push(wrongType('cancelled', 'a boolean', cancelled));
  }
  const turnId = optionalString(object, 'turnId', 'TurnID', dropped);
  if (turnId !== undefined) result.turnId = turnId;
  const structured =
    object.outputStructured !== undefined ? object.outputStructured : object.OutputStructured;
  if (structured !== undefined && structured !== null) result.outputStructured = structured;
  const attributes = optionalObject(object, 'attributes', 'Attributes', dropped);
  if (attributes !== undefined) result.attributes = attributes as ToolAttributes;
  return result;
}

/**
 * Checks a `tool.stream.*` payload (the seed's snake_case keys) without copying it: `tool_id`
 * must be a non-empty string (it pairs the event with its call) and `tool_name` present, or the
 * line is rejected. A `tool_name` that is not a string becomes `''`; a `turn_id` that is not a
 * string, a `sequence` that is not an integer or a `progress` that is not a finite number is
 * removed; each is added to `dropped`. Returns a rejection, or `undefined` when the payload may
 * pass on. Internal to wire.
 */
export function checkToolStreamPayload(
  payload: unknown,
  type: string,
  dropped: DroppedField[],
): DecodeFailure | undefined {
  const problem = checkPayloadObject(payload, type);
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const toolId = object.tool_id;
  if (toolId === undefined || toolId === null) return missing('tool_id');
  if (typeof toolId !== 'string' || toolId === '') {
    return rejectWrongType('tool_id', 'a non-empty string', toolId);
  }
  const toolName = object.tool_name;
  if (toolName === undefined || toolName === null) return missing('tool_name');
  if (typeof toolName !== 'string') object.tool_name = dropString('tool_name', toolName, dropped);
  const turnId = object.turn_id;
  if (turnId !== undefined && turnId !== null && typeof turnId !== 'string') {
    dropped.push(wrongType('turn_id', 'a string', turnId));
    delete object.turn_id;
  }
  const sequence = object.sequence;
  if (sequence !== undefined && sequence !== null && !Number.isSafeInteger(sequence)) {
    dropped.push(wrongType('sequence', 'an integer', sequence));
    delete object.sequence;
  }
  const progress = object.progress;
  if (
    progress !== undefined &&
    progress !== null &&
    (typeof progress !== 'number' || !Number.isFinite(progress))
  ) {
    dropped.push(wrongType('progress', 'a number', progress));
    delete object.progress;
  }
  return undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkPayloadObject(payload: unknown, type: string): DecodeFailure | undefined {
  if (payload === undefined || payload === null) {
    return rejectLine('missing_field', `payload is missing (a ${type} event needs one)`);
  }
  if (!isObject(payload)) {
    return rejectLine('wrong_type', `payload must be an object, got ${describeValue(payload)}`);
  }
  return undefined;
}

/** The non-empty string under the camelCase key, else the Go key; a rejection otherwise. */
function requiredString(object: JsonObject, key: string, goKey: string): string | DecodeFailure {
  const usedKey = object[key] !== undefined ? key : goKey;
  const value = object[usedKey];
  if (value === undefined || value === null) return missing(key);
  if (typeof value !== 'string' || value === '') {
    return rejectWrongType(usedKey, 'a non-empty string', value);
  }
  return value;
}

/**
 * The string under either key; `undefined` when absent, null or empty, or when of another type,
 * which is then added to `dropped`.
 */
function optionalString(
  object: JsonObject,
  key: string,
  goKey: string,
  dropped: DroppedField[],
): string | undefined {
  const usedKey = object[key] !== undefined ? key : goKey;
  const value = object[usedKey];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  dropped.push(wrongType(usedKey, 'a string', value));
  return undefined;
}

/** `''` in place of a string field of another type, which is added to `dropped`. */
function dropString(key: string, value: unknown, dropped: DroppedField[]): string {
  dropped.push(wrongType(key, 'a string', value));
  return '';
}

/**
 * The error a result reports: a non-empty string as it is; any other value but `false` still
 * says the call failed (as a Go `error` marshalled to an object does), with its JSON, cut short,
 * as the message.
 */
function readError(object: JsonObject): string | undefined {
  const value = object.error !== undefined ? object.error : object.Error;
  if (value === undefined || value === null || value === '' || value === false) return undefined;
  if (typeof value === 'string') return value;
  const text = JSON.stringify(value);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}

/** The object under either key; `undefined` when absent or null, or (added to `dropped`) not an object. */
function optionalObject(
  object: JsonObject,
  key: string,
  goKey: string,
  dropped: DroppedField[],
): JsonObject | undefined {
  const usedKey = object[key] !== undefined ? key : goKey;
  const value = object[usedKey];
  if (value === undefined || value === null) return undefined;
  if (isObject(value)) return value;
  dropped.push(wrongType(usedKey, 'an object', value));
  return undefined;
}

function missing(key: string): DecodeFailure {
  return rejectLine('missing_field', `payload.${key} is missing`);
}

function rejectWrongType(key: string, expected: string, value: unknown): DecodeFailure {
  return rejectLine(
    'wrong_type',
    `payload.${key} must be ${expected}, got ${describeValue(value)}`,
  );
}
