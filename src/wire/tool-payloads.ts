import type { ToolAttributes, ToolCall, ToolResult } from '../events/index.js';
import { describeValue, rejectLine, type DecodeFailure } from './decode-result.js';

type JsonObject = Record<string, unknown>;

/**
 * The `tool.invoke` payload of a line as a {@link ToolCall}. Accepts the TypeScript side's own
 * camelCase keys and the Go implementation's (`ID`, `Name`, `Arguments`, `TurnID`,
 * `ParentCallID`, `Description`; `_schema_version` and `Sequence` are ignored). `id` and `name`
 * are required non-empty strings; `arguments` of `null` (Go's nil map) becomes `{}`; an empty
 * `turnId`, `parentCallId` or `description` is left out; `attributes` must be an object (the
 * tracer checks its values). Internal to wire.
 */
export function normalizeToolCall(payload: unknown): ToolCall | DecodeFailure {
  const problem = checkPayloadObject(payload, 'tool.invoke');
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const id = requiredString(object, 'id', 'ID', false);
  if (typeof id !== 'string') return id;
  const name = requiredString(object, 'name', 'Name', false);
  if (typeof name !== 'string') return name;

  const argumentsKey = object.arguments !== undefined ? 'arguments' : 'Arguments';
  const argumentsValue = object[argumentsKey];
  let toolArguments: JsonObject;
  if (argumentsValue === undefined || argumentsValue === null) {
    toolArguments = {};
  } else if (isObject(argumentsValue)) {
    toolArguments = argumentsValue;
  } else {
    return wrongType(argumentsKey, 'an object', argumentsValue);
  }

  const call: ToolCall = { id, name, arguments: toolArguments };
  const turnId = optionalString(object, 'turnId', 'TurnID');
  if (typeof turnId === 'object') return turnId;
  if (turnId !== undefined) call.turnId = turnId;
  const parentCallId = optionalString(object, 'parentCallId', 'ParentCallID');
  if (typeof parentCallId === 'object') return parentCallId;
  if (parentCallId !== undefined) call.parentCallId = parentCallId;
  const description = optionalString(object, 'description', 'Description');
  if (typeof description === 'object') return description;
  if (description !== undefined) call.description = description;
  const attributes = optionalObject(object, 'attributes', 'Attributes');
  if (attributes instanceof Rejection) return attributes.failure;
  if (attributes !== undefined) call.attributes = attributes as ToolAttributes;
  return call;
}

/**
 * The `tool.result` payload of a line as a {@link ToolResult}, from camelCase or Go keys
 * (`ID`, `Name`, `Output`, `Error`, `ErrorType`, `TurnID`, `OutputStructured`; Go's `OutputFile`
 * and `OutputData` have no place in a `ToolResult` and are dropped). `id` must be a non-empty
 * string and `name` a string; a missing `output` is `''`; an empty `error`, `errorType` or
 * `turnId` and a `null` `outputStructured` are left out; `attributes` must be an object.
 * Internal to wire.
 */
export function normalizeToolResult(payload: unknown): ToolResult | DecodeFailure {
  const problem = checkPayloadObject(payload, 'tool.result');
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const id = requiredString(object, 'id', 'ID', false);
  if (typeof id !== 'string') return id;
  const name = requiredString(object, 'name', 'Name', true);
  if (typeof name !== 'string') return name;

  const outputKey = object.output !== undefined ? 'output' : 'Output';
  const output = object[outputKey] ?? '';
  if (typeof output !== 'string') return wrongType(outputKey, 'a string', output);

  const result: ToolResult = { id, name, output };
  const error = optionalString(object, 'error', 'Error');
  if (typeof error === 'object') return error;
  if (error !== undefined) result.error = error;
  const errorType = optionalString(object, 'errorType', 'ErrorType');
  if (typeof errorType === 'object') return errorType;
  if (errorType !== undefined) result.errorType = errorType;
  const cancelled = object.cancelled;
  if (cancelled !== undefined && cancelled !== null) {
    if (typeof cancelled !== 'boolean') return wrongType('cancelled', 'a boolean', cancelled);
    result.cancelled = cancelled;
  }
  const turnId = optionalString(object, 'turnId', 'TurnID');
  if (typeof turnId === 'object') return turnId;
  if (turnId !== undefined) result.turnId = turnId;
  const structured =
    object.outputStructured !== undefined ? object.outputStructured : object.OutputStructured;
  if (structured !== undefined && structured !== null) result.outputStructured = structured;
  const attributes = optionalObject(object, 'attributes', 'Attributes');
  if (attributes instanceof Rejection) return attributes.failure;
  if (attributes !== undefined) result.attributes = attributes as ToolAttributes;
  return result;
}

/**
 * Checks a `tool.stream.*` payload (the seed's snake_case keys) without copying it: `tool_name`
 * a string, `tool_id` a non-empty string, `turn_id` a string when present, `sequence` an integer
 * and `progress` a finite number when present. Returns a rejection, or `undefined` when the
 * payload may pass through as it is. Internal to wire.
 */
export function checkToolStreamPayload(payload: unknown, type: string): DecodeFailure | undefined {
  const problem = checkPayloadObject(payload, type);
  if (problem !== undefined) return problem;
  const object = payload as JsonObject;
  const toolName = object.tool_name;
  if (toolName === undefined || toolName === null) return missing('tool_name');
  if (typeof toolName !== 'string') return wrongType('tool_name', 'a string', toolName);
  const toolId = object.tool_id;
  if (toolId === undefined || toolId === null) return missing('tool_id');
  if (typeof toolId !== 'string' || toolId === '') {
    return wrongType('tool_id', 'a non-empty string', toolId);
  }
  const turnId = object.turn_id;
  if (turnId !== undefined && turnId !== null && typeof turnId !== 'string') {
    return wrongType('turn_id', 'a string', turnId);
  }
  const sequence = object.sequence;
  if (sequence !== undefined && sequence !== null && !Number.isSafeInteger(sequence)) {
    return wrongType('sequence', 'an integer', sequence);
  }
  const progress = object.progress;
  if (
    progress !== undefined &&
    progress !== null &&
    (typeof progress !== 'number' || !Number.isFinite(progress))
  ) {
    return wrongType('progress', 'a number', progress);
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

/** The string under the camelCase key, else the Go key; a rejection when absent or not one. */
function requiredString(
  object: JsonObject,
  key: string,
  goKey: string,
  allowEmpty: boolean,
): string | DecodeFailure {
  const usedKey = object[key] !== undefined ? key : goKey;
  const value = object[usedKey];
  if (value === undefined || value === null) return missing(key);
  if (typeof value !== 'string' || (!allowEmpty && value === '')) {
    return wrongType(usedKey, allowEmpty ? 'a string' : 'a non-empty string', value);
  }
  return value;
}

/** The string under either key, `undefined` when absent, null or empty, a rejection otherwise. */
function optionalString(
  object: JsonObject,
  key: string,
  goKey: string,
): string | undefined | DecodeFailure {
  const usedKey = object[key] !== undefined ? key : goKey;
  const value = object[usedKey];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') return wrongType(usedKey, 'a string', value);
  return value;
}

/** A rejection, told apart from an object value by its class. */
class Rejection {
  constructor(readonly failure: DecodeFailure) {}
}

/** The object under either key, `undefined` when absent or null, a rejection otherwise. */
function optionalObject(
  object: JsonObject,
  key: string,
  goKey: string,
): JsonObject | undefined | Rejection {
  const usedKey = object[key] !== undefined ? key : goKey;
  const value = object[usedKey];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) return new Rejection(wrongType(usedKey, 'an object', value));
  return value;
}

function missing(key: string): DecodeFailure {
  return rejectLine('missing_field', `payload.${key} is missing`);
}

function wrongType(key: string, expected: string, value: unknown): DecodeFailure {
  return rejectLine(
    'wrong_type',
    `payload.${key} must be ${expected}, got ${describeValue(value)}`,
  );
}
