import {
  AGENT_TURN_END,
  AGENT_TURN_START,
  IO_SESSION_END,
  IO_SESSION_START,
  LLM_ERROR,
  LLM_REQUEST,
  LLM_RESPONSE,
  LLM_STREAM_CHUNK,
  LLM_STREAM_END,
  SUBAGENT_COMPLETE,
  SUBAGENT_ITERATION,
  SUBAGENT_SPAWN,
  SUBAGENT_STARTED,
  TOOL_INVOKE,
  TOOL_RESULT,
} from '../events/index.js';
import { rejectLine, type DecodeFailure } from './decode-result.js';
import { describeValue } from '../errors/index.js';
import { WrongField, wrongPayloadField as wrongType, type DroppedField } from './dropped-field.js';

type JsonObject = Record<string, unknown>;

/**
 * What a field must hold, and what a rejection or a dropped field says it should have been:
 * `text` is a string whose empty value is left out, `id` a non-empty string, `error` any value
 * (see {@link readError}), `any` any value but `null`.
 */
const EXPECTED = {
  string: 'a string',
  text: 'a string',
  id: 'a non-empty string',
  number: 'a finite number',
  boolean: 'a boolean',
  object: 'an object',
  usage: 'an object or a number of tokens',
  error: '',
  any: '',
} as const;
type Kind = keyof typeof EXPECTED;

/**
 * One field of a payload as the tables below write it: its camelCase name (the events module's
 * payload type's), the Go name, what it must be, what a missing or wrong value does, and the
 * value it takes when it has none. The snake_case spelling is derived from the camelCase one.
 * `need`: absent, a wrong value is left out and added to `dropped`; `pairs`, a wrong value
 * rejects the line (it pairs the event with its span: a call id, a request id); `required`, a
 * missing one does too.
 */
type FieldEntry = readonly [
  camel: string,
  go: string,
  kind: Kind,
  need?: 'pairs' | 'required',
  fallback?: '' | 'object',
];

interface Field {
  readonly camel: string;
  readonly go: string | undefined;
  readonly snake: string | undefined;
  readonly kind: Kind;
  readonly need: FieldEntry[3];
  readonly fallback: FieldEntry[4];
}

/**
 * The fields of one event type's payload, copied into a new object in camelCase (the rest,
 * messages and content, go). `strict`: the payload must be an object (a tool event without one
 * rejects the line; an agent event's odd payload is dropped and the event still ends its span).
 */
interface Table {
  readonly fields: readonly Field[];
  readonly strict: boolean;
}

/** `turnId` → `turn_id`; `undefined` for a one-word name, whose snake_case is itself. */
function snakeCaseOf(camel: string): string | undefined {
  const snake = camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  return snake === camel ? undefined : snake;
}

function table(entries: readonly FieldEntry[], strict = false): Table {
  const fields = entries.map(([camel, go, kind, need, fallback]) => ({
    camel,
    go: go === camel ? undefined : go,
    snake: snakeCaseOf(camel),
    kind,
    need,
    fallback,
  }));
  return { fields, strict };
}

const TURN: readonly FieldEntry[] = [
  ['turnId', 'TurnID', 'string'],
  ['iteration', 'Iteration', 'number'],
  ['sessionId', 'SessionID', 'string'],
];
const LLM_COMMON: readonly FieldEntry[] = [
  ['requestId', 'RequestID', 'string', 'pairs'],
  ['turnId', 'TurnID', 'string'],
];
const SUBAGENT: readonly FieldEntry[] = [
  ['spawnId', 'SpawnID', 'string', 'pairs'],
  ['task', 'Task', 'string'],
  ['name', 'Name', 'string'],
  ['parentTurnId', 'ParentTurnID', 'string'],
];
const SESSION: readonly FieldEntry[] = [['sessionId', 'SessionID', 'string']];

/**
 * Every event type whose payload the decoder maps, with its fields. Tool payloads:
 * `tool.invoke` as a `ToolCall` (Go's `_schema_version` and `Sequence` ignored) and
 * `tool.result` as a `ToolResult` (Go's `OutputFile` and `OutputData` have no place in one), a
 * missing `arguments` `{}`, a missing `name` or `output` `''`, an empty optional string left out.
 */
const TABLES: ReadonlyMap<string, Table> = new Map([
  [
    TOOL_INVOKE,
    table(
      [
        ['id', 'ID', 'id', 'required'],
        ['name', 'Name', 'id', 'required'],
        ['arguments', 'Arguments', 'object', undefined, 'object'],
        ['turnId', 'TurnID', 'text'],
        ['parentCallId', 'ParentCallID', 'text'],
        ['description', 'Description', 'text'],
        ['attributes', 'Attributes', 'object'],
      ],
      true,
    ),
  ],
  [
    TOOL_RESULT,
    table(
      [
        ['id', 'ID', 'id', 'required'],
        ['name', 'Name', 'string', undefined, ''],
        ['output', 'Output', 'string', undefined, ''],
        ['error', 'Error', 'error'],
        ['errorType', 'ErrorType', 'text'],
        ['cancelled', 'Cancelled', 'boolean'],
        ['turnId', 'TurnID', 'text'],
        ['outputStructured', 'OutputStructured', 'any'],
        ['attributes', 'Attributes', 'object'],
      ],
      true,
    ),
  ],
  [IO_SESSION_START, table(SESSION)],
  [IO_SESSION_END, table(SESSION)],
  [AGENT_TURN_START, table(TURN)],
  [AGENT_TURN_END, table(TURN)],
  [
    LLM_REQUEST,
    table([
      ...LLM_COMMON,
      ['model', 'Model', 'string'],
      ['role', 'Role', 'string'],
      ['maxTokens', 'MaxTokens', 'number'],
      ['temperature', 'Temperature', 'number'],
      ['stream', 'Stream', 'boolean'],
    ]),
  ],
  [
    LLM_RESPONSE,
    table([
      ...LLM_COMMON,
      ['model', 'Model', 'string'],
      ['content', 'Content', 'string'],
      ['usage', 'Usage', 'usage'],
      ['finishReason', 'FinishReason', 'string'],
      ['costUsd', 'CostUSD', 'number'],
    ]),
  ],
  [
    LLM_STREAM_CHUNK,
    table([...LLM_COMMON, ['content', 'Content', 'string'], ['index', 'Index', 'number']]),
  ],
  [
    LLM_STREAM_END,
    table([...LLM_COMMON, ['usage', 'Usage', 'usage'], ['finishReason', 'FinishReason', 'string']]),
  ],
  [
    LLM_ERROR,
    table([...LLM_COMMON, ['error', 'Error', 'string'], ['errorType', 'ErrorType', 'string']]),
  ],
  [SUBAGENT_SPAWN, table(SUBAGENT)],
  [SUBAGENT_STARTED, table(SUBAGENT)],
  [
    SUBAGENT_ITERATION,
    table([
      ['spawnId', 'SpawnID', 'string', 'pairs'],
      ['iteration', 'Iteration', 'number'],
    ]),
  ],
  [
    SUBAGENT_COMPLETE,
    table([
      ...SUBAGENT,
      ['error', 'Error', 'string'],
      ['iterations', 'Iterations', 'number'],
      ['tokensUsed', 'TokensUsed', 'usage'],
      ['costUsd', 'CostUSD', 'number'],
    ]),
  ],
]);

const TOOL_STREAM_PREFIX = 'tool.stream.';
/** Every `tool.stream.*` payload must be an object; {@link checkToolStreamPayload} reads it. */
const TOOL_STREAM = table([], true);

/** Token counts: camelCase, Go's name, snake_case. */
const USAGE: readonly (readonly [camel: string, go: string, snake: string])[] = [
  ['inputTokens', 'PromptTokens', 'input_tokens'],
  ['outputTokens', 'CompletionTokens', 'output_tokens'],
  ['totalTokens', 'TotalTokens', 'total_tokens'],
];

/** A list entry's keys, camelCase and Go's. */
const ID = ['id', 'ID'] as const;
const NAME = ['name', 'Name'] as const;
const DESCRIPTION = ['description', 'Description'] as const;

/** Longest message read from an `error` that is not a string. */
const MAX_ERROR_TEXT = 200;

/**
 * The payload of a line as the payload type of the events module, for the event types it maps
 * (tool and agent events; any other payload is returned as it is), from any of three spellings:
 * camelCase (`turnId`, `usage.inputTokens`), Go's (`ID`, `TurnID`, `Usage.PromptTokens`) or
 * snake_case (`turn_id`, `usage.input_tokens`, Nexus's `session_id`); when a payload spells a
 * field twice, camelCase wins, then Go's. Only the fields tracing reads are kept: a Nexus
 * `llm.request` carries the whole conversation, which nothing downstream needs.
 *
 * A field that pairs the event with its span (a call id, a request id, a spawn id) of the wrong
 * type rejects the line, naming the field as the line spelled it: without it the event could end
 * the wrong span; so does a tool event without a payload object or its call id. Any other field
 * of the wrong type is left out and added to `dropped`, and the event goes on; a number where a
 * usage object belongs (`"TokensUsed": 1832`, as Nexus documents the delegate tool's output) is
 * read as the total; an `error` that is not a string still marks the call failed, with the
 * value's JSON as its message. A rejection is returned as a `DecodeFailure`, never the
 * payload itself: compare with the payload before asking. Internal to wire.
 */
export function normalizePayload(type: string, payload: unknown, dropped: DroppedField[]): unknown {
  const mapped = type.startsWith(TOOL_STREAM_PREFIX) ? TOOL_STREAM : TABLES.get(type);
  if (mapped === undefined) return payload;
  if (payload === undefined || payload === null) {
    if (!mapped.strict) return payload;
    return rejectLine('missing_field', `payload is missing (a ${type} event needs one)`);
  }
  if (!isObject(payload)) {
    const message = `payload must be an object, got ${describeValue(payload)}`;
    if (mapped.strict) return rejectLine('wrong_type', message);
    dropped.push(new WrongField('payload', message));
    return undefined;
  }
  if (mapped === TOOL_STREAM) return checkToolStreamPayload(payload, dropped);
  const result: JsonObject = {};
  for (const field of mapped.fields) {
    // camelCase first, then Go's, then snake_case: a field in our own spelling costs one look-up.
    let key = field.camel;
    let value = payload[key];
    if (value === undefined && field.go !== undefined) {
      key = field.go;
      value = payload[key];
      if (value === undefined && field.snake !== undefined) {
        key = field.snake;
        value = payload[key];
      }
    }
    if (value === undefined || value === null) {
      if (field.need === 'required') return missing(field.camel);
      if (field.fallback !== undefined) result[field.camel] = fallbackOf(field);
      continue;
    }
    const checked = check(value, key, field.kind, dropped);
    if (!(checked instanceof WrongField)) {
      if (checked !== undefined) result[field.camel] = checked;
      continue;
    }
    if (field.need === 'pairs' || field.need === 'required') {
      return rejectLine('wrong_type', checked.message);
    }
    dropped.push(checked);
    if (field.fallback !== undefined) result[field.camel] = fallbackOf(field);
  }
  if (type === LLM_RESPONSE) {
    const calls = listOf(payload, ['toolCalls', 'ToolCalls', 'tool_calls'], ID, NAME, dropped);
    if (calls !== undefined) result.toolCalls = calls;
  } else if (type === LLM_REQUEST) {
    const tools = listOf(payload, ['tools', 'Tools', 'tools'], NAME, DESCRIPTION, dropped);
    if (tools !== undefined) result.tools = tools;
  }
  return result;
}

/**
 * Checks a `tool.stream.*` payload (the seed's snake_case keys) where it lies and passes it on:
 * most lines of a journal are stream events, so no copy, and each field read by name (a table
 * walk here cost the decoder a tenth of its rate). `tool_id` must be a non-empty string (it
 * pairs the event with its call) and `tool_name` present, or the line is rejected; a
 * `tool_name` that is not a string becomes `''`; a `turn_id` that is not a string, a `sequence`
 * that is not an integer, a `progress` that is not a finite number or `attributes` that are not
 * an object is removed (their values are the tracer's to check); each is added to `dropped`.
 */
function checkToolStreamPayload(payload: JsonObject, dropped: DroppedField[]): unknown {
  const toolId = payload.tool_id;
  if (toolId === undefined || toolId === null) return missing('tool_id');
  if (typeof toolId !== 'string' || toolId === '') {
    return rejectLine('wrong_type', wrongType('tool_id', 'a non-empty string', toolId).message);
  }
  const toolName = payload.tool_name;
  if (toolName === undefined || toolName === null) return missing('tool_name');
  if (typeof toolName !== 'string') {
    dropped.push(wrongType('tool_name', 'a string', toolName));
    payload.tool_name = '';
  }
  const turnId = payload.turn_id;
  if (turnId !== undefined && turnId !== null && typeof turnId !== 'string') {
    dropped.push(wrongType('turn_id', 'a string', turnId));
    delete payload.turn_id;
  }
  const sequence = payload.sequence;
  if (sequence !== undefined && sequence !== null && !Number.isSafeInteger(sequence)) {
    dropped.push(wrongType('sequence', 'an integer', sequence));
    delete payload.sequence;
  }
  const progress = payload.progress;
  if (
    progress !== undefined &&
    progress !== null &&
    (typeof progress !== 'number' || !Number.isFinite(progress))
  ) {
    dropped.push(wrongType('progress', 'a number', progress));
    delete payload.progress;
  }
  const attributes = payload.attributes;
  if (attributes !== undefined && attributes !== null && !isObject(attributes)) {
    dropped.push(wrongType('attributes', 'an object', attributes));
    delete payload.attributes;
  }
  return payload;
}

function missing(key: string): DecodeFailure {
  return rejectLine('missing_field', `payload.${key} is missing`);
}

function fallbackOf(field: Field): unknown {
  return field.fallback === 'object' ? {} : field.fallback;
}

/** The value a field keeps (`undefined`: left out), or what was wrong with it. */
function check(value: unknown, key: string, kind: Kind, dropped: DroppedField[]): unknown {
  switch (kind) {
    case 'string':
      if (typeof value === 'string') return value;
      break;
    case 'text':
      if (typeof value === 'string') return value === '' ? undefined : value;
      break;
    case 'id':
      if (typeof value === 'string' && value !== '') return value;
      break;
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      break;
    case 'boolean':
      if (typeof value === 'boolean') return value;
      break;
    case 'object':
      if (isObject(value)) return value;
      break;
    case 'usage':
      return normalizeUsage(value, key, dropped);
    case 'error':
      return readError(value);
    case 'any':
      return value;
  }
  return wrongType(key, EXPECTED[kind], value);
}

/**
 * The error a result reports: a non-empty string as it is; any other value but `false` still
 * says the call failed (as a Go `error` marshalled to an object does), with its JSON, cut short,
 * as the message.
 */
function readError(value: unknown): string | undefined {
  if (value === '' || value === false) return undefined;
  if (typeof value === 'string') return value;
  const text = JSON.stringify(value);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}

/** A usage object with its counts checked one by one; a plain count is the total. */
function normalizeUsage(
  value: unknown,
  key: string,
  dropped: DroppedField[],
): JsonObject | WrongField {
  if (isCount(value)) return { totalTokens: value };
  if (!isObject(value)) return wrongType(key, EXPECTED.usage, value);
  const usage: JsonObject = {};
  for (const [camel, go, snake] of USAGE) {
    const used = value[camel] !== undefined ? camel : value[go] !== undefined ? go : snake;
    const count = value[used];
    if (count === undefined || count === null) continue;
    if (isCount(count)) usage[camel] = count;
    else dropped.push(wrongType(`${key}.${used}`, 'a non-negative integer', count));
  }
  return usage;
}

/**
 * A list of `{[first]: string, [second]: string}` entries (tool calls, tools) under any of its
 * spellings, each key in camelCase or Go's (`ID`, `Name`, `Description`). An entry that is not
 * an object, or a value in one that is not a string, is dropped.
 */
function listOf(
  payload: JsonObject,
  [camel, go, snake]: readonly [string, string, string],
  first: readonly [string, string],
  second: readonly [string, string],
  dropped: DroppedField[],
): JsonObject[] | undefined {
  const key = payload[camel] !== undefined ? camel : payload[go] !== undefined ? go : snake;
  const list = payload[key];
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list)) {
    dropped.push(wrongType(key, 'an array', list));
    return undefined;
  }
  const entries: JsonObject[] = [];
  for (const [index, entry] of list.entries()) {
    if (!isObject(entry)) {
      dropped.push(wrongType(`${key}[]`, 'an object', entry, `${key}[${index}]`));
      continue;
    }
    const out: JsonObject = {};
    for (const [name, goName] of [first, second]) {
      const used = entry[name] !== undefined ? name : goName;
      const value = entry[used];
      if (value === undefined || value === null) continue;
      if (typeof value === 'string') out[name] = value;
      else
        dropped.push(wrongType(`${key}[].${used}`, 'a string', value, `${key}[${index}].${used}`));
    }
    entries.push(out);
  }
  return entries;
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether `value` is a non-negative safe integer (a count, a sequence, a depth). */
export function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
