import type { ToolAttributes, ToolCall, ToolResult } from '../events/index.js';
import { rejectLine, type DecodeFailure } from './decode-result.js';
import { describeValue } from './describe-value.js';
import { wrongPayloadField as wrongType, type DroppedField } from './dropped-field.js';

type JsonObject = Record<string, unknown>;

/**
 * How a field may be spelled: the TypeScript side's camelCase (the typed payloads'), Go's
 * PascalCase, and snake_case where it differs from camelCase (`turn_id`; `id` is both). The
 * camelCase key is read first, so a line in our own spelling pays no more than one look-up per
 * field it carries.
 */
type Spelling = readonly [camel: string, go: string, snake?: string];

const ID: Spelling = ['id', 'ID'];
const NAME: Spelling = ['name', 'Name'];
const ARGUMENTS: Spelling = ['arguments', 'Arguments'];
const TURN_ID: Spelling = ['turnId', 'TurnID', 'turn_id'];
const PARENT_CALL_ID: Spelling = ['parentCallId', 'ParentCallID', 'parent_call_id'];
const DESCRIPTION: Spelling = ['description', 'Description'];
const ATTRIBUTES: Spelling = ['attributes', 'Attributes'];
const OUTPUT: Spelling = ['output', 'Output'];
const ERROR: Spelling = ['error', 'Error'];
const ERROR_TYPE: Spelling = ['errorType', 'ErrorType', 'error_type'];
const CANCELLED: Spelling = ['cancelled', 'Cancelled'];
const OUTPUT_STRUCTURED: Spelling = ['outputStructured', 'OutputStructured', 'output_structured'];

/** Longest message read from an `error` that is not a string. */
const MAX_ERROR_TEXT = 200;

/**
 * The `tool.invoke` payload of a line as a {@link ToolCall}, whichever way it spells its keys:
 * the TypeScript side's camelCase, Go's (`ID`, `Name`, `Arguments`, `TurnID`, `ParentCallID`,
 * `Description`, `Attributes`; `_schema_version` and `Sequence` are ignored) or snake_case
 * (`turn_id`, `parent_call_id`). When a payload spells a field twice, camelCase wins, then Go's.
 * `id` and `name` are required non-empty strings (they say which call of which tool this is:
 * anything else rejects the line); `arguments` of `null` (Go's nil map) becomes `{}`; an empty
 * `turnId`, `parentCallId` or `description` is left out. `arguments`, `turnId`, `parentCallId`,
 * `description` or `attributes` (an object; the tracer checks its values) of another type is
 * left out and added to `dropped`, named as the line spelled it. Internal to wire.
 */
export function normalizeToolCall(
  payload: unknown,
  dropped: DroppedField[],
): ToolCall | DecodeFailure {
  const problem = checkPayloadObject(payload, 'tool.invoke');
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const id = requiredString(object, ID);
  if (typeof id !== 'string') return id;
  const name = requiredString(object, NAME);
  if (typeof name !== 'string') return name;

  const argumentsValue = valueOf(object, ARGUMENTS);
  let toolArguments: JsonObject = {};
  if (isObject(argumentsValue)) toolArguments = argumentsValue;
  else if (argumentsValue !== undefined && argumentsValue !== null) {
    dropped.push(wrongType(keyOf(object, ARGUMENTS), 'an object', argumentsValue));
  }

  const call: ToolCall = { id, name, arguments: toolArguments };
  const turnId = optionalString(object, TURN_ID, dropped);
  if (turnId !== undefined) call.turnId = turnId;
  const parentCallId = optionalString(object, PARENT_CALL_ID, dropped);
  if (parentCallId !== undefined) call.parentCallId = parentCallId;
  const description = optionalString(object, DESCRIPTION, dropped);
  if (description !== undefined) call.description = description;
  const attributes = optionalObject(object, ATTRIBUTES, dropped);
  if (attributes !== undefined) call.attributes = attributes as ToolAttributes;
  return call;
}

/**
 * The `tool.result` payload of a line as a {@link ToolResult}, from camelCase, Go's (`ID`,
 * `Name`, `Output`, `Error`, `ErrorType`, `Cancelled`, `TurnID`, `OutputStructured`,
 * `Attributes`; Go's `OutputFile` and `OutputData` have no place in a `ToolResult` and are
 * dropped) or snake_case keys (`error_type`, `turn_id`, `output_structured`); camelCase wins,
 * then Go's. `id` must be a non-empty string (it pairs the result with its call: anything else
 * rejects the line); a missing `output` is `''`; an empty `error`, `errorType` or `turnId` and a
 * `null` `outputStructured` are left out. `name`, `output`, `cancelled`, `errorType`, `turnId`
 * or `attributes` (an object) of another type is left out (`name` and `output` become `''`) and
 * added to `dropped`; an `error` that is not a string still marks the call failed, with the
 * value's JSON as its message. Internal to wire.
 */
export function normalizeToolResult(
  payload: unknown,
  dropped: DroppedField[],
): ToolResult | DecodeFailure {
  const problem = checkPayloadObject(payload, 'tool.result');
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const id = requiredString(object, ID);
  if (typeof id !== 'string') return id;

  const name = valueOf(object, NAME) ?? '';
  const output = valueOf(object, OUTPUT) ?? '';
  const result: ToolResult = {
    id,
    name: typeof name === 'string' ? name : dropString(keyOf(object, NAME), name, dropped),
    output:
      typeof output === 'string' ? output : dropString(keyOf(object, OUTPUT), output, dropped),
  };
  const error = readError(valueOf(object, ERROR));
  if (error !== undefined) result.error = error;
  const errorType = optionalString(object, ERROR_TYPE, dropped);
  if (errorType !== undefined) result.errorType = errorType;
  const cancelled = valueOf(object, CANCELLED);
  if (typeof cancelled === 'boolean') result.cancelled = cancelled;
  else if (cancelled !== undefined && cancelled !== null) {
    dropped.push(wrongType(keyOf(object, CANCELLED), 'a boolean', cancelled));
  }
  const turnId = optionalString(object, TURN_ID, dropped);
  if (turnId !== undefined) result.turnId = turnId;
  const structured = valueOf(object, OUTPUT_STRUCTURED);
  if (structured !== undefined && structured !== null) result.outputStructured = structured;
  const attributes = optionalObject(object, ATTRIBUTES, dropped);
  if (attributes !== undefined) result.attributes = attributes as ToolAttributes;
  return result;
}

/**
 * Checks a `tool.stream.*` payload (the seed's snake_case keys) without copying it: `tool_id`
 * must be a non-empty string (it pairs the event with its call) and `tool_name` present, or the
 * line is rejected. A `tool_name` that is not a string becomes `''`; a `turn_id` that is not a
 * string, a `sequence` that is not an integer, a `progress` that is not a finite number or
 * `attributes` that are not an object is removed (their values are the tracer's to check); each is added to `dropped`. Returns a rejection, or `undefined` when the payload may
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
  const attributes = object.attributes;
  if (attributes !== undefined && attributes !== null && !isObject(attributes)) {
    dropped.push(wrongType('attributes', 'an object', attributes));
    delete object.attributes;
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

/** The value of a field under the first of its spellings the payload has; `undefined` if none. */
function valueOf(object: JsonObject, spelling: Spelling): unknown {
  const value = object[spelling[0]];
  if (value !== undefined) return value;
  const goValue = object[spelling[1]];
  if (goValue !== undefined) return goValue;
  const snake = spelling[2];
  return snake === undefined ? undefined : object[snake];
}

/**
 * The key {@link valueOf} read a field from, for naming it in a rejection or a dropped field;
 * the camelCase key when the payload has none. Only asked when something is wrong.
 */
function keyOf(object: JsonObject, spelling: Spelling): string {
  for (const key of spelling) {
    if (key !== undefined && object[key] !== undefined) return key;
  }
  return spelling[0];
}

/** The non-empty string a field holds; a rejection naming the field otherwise. */
function requiredString(object: JsonObject, spelling: Spelling): string | DecodeFailure {
  const value = valueOf(object, spelling);
  if (typeof value === 'string' && value !== '') return value;
  if (value === undefined || value === null) return missing(spelling[0]);
  return rejectWrongType(keyOf(object, spelling), 'a non-empty string', value);
}

/**
 * The string a field holds; `undefined` when absent, null or empty, or when of another type,
 * which is then added to `dropped`.
 */
function optionalString(
  object: JsonObject,
  spelling: Spelling,
  dropped: DroppedField[],
): string | undefined {
  const value = valueOf(object, spelling);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  dropped.push(wrongType(keyOf(object, spelling), 'a string', value));
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
function readError(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '' || value === false) return undefined;
  if (typeof value === 'string') return value;
  const text = JSON.stringify(value);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}

/** The object a field holds; `undefined` when absent or null, or (added to `dropped`) not an object. */
function optionalObject(
  object: JsonObject,
  spelling: Spelling,
  dropped: DroppedField[],
): JsonObject | undefined {
  const value = valueOf(object, spelling);
  if (value === undefined || value === null) return undefined;
  if (isObject(value)) return value;
  dropped.push(wrongType(keyOf(object, spelling), 'an object', value));
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
