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
} from '../events/index.js';
import { rejectLine } from './decode-result.js';
import { describeValue } from './describe-value.js';
import { WrongField, wrongPayloadField as wrongType, type DroppedField } from './dropped-field.js';

type JsonObject = Record<string, unknown>;

/**
 * One field of a payload as the table below writes it: its camelCase name, the Go name, what it
 * must be, and whether it pairs the event with its span (a request id, a spawn id), so that a
 * wrong value rejects the line. The snake_case spelling is derived from the camelCase one.
 */
type FieldEntry = readonly [
  camel: string,
  go: string,
  kind: 'string' | 'number' | 'boolean' | 'usage',
  pairs?: 'pairs',
];

/** A {@link FieldEntry} with its snake_case spelling (`undefined` when it is the camelCase one). */
interface Field {
  readonly camel: string;
  readonly go: string;
  readonly snake: string | undefined;
  readonly kind: FieldEntry[2];
  readonly pairs: boolean;
}

/** `turnId` → `turn_id`; `undefined` for a one-word name, whose snake_case is itself. */
function snakeCaseOf(camel: string): string | undefined {
  const snake = camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  return snake === camel ? undefined : snake;
}

function fieldsOf(entries: readonly FieldEntry[]): readonly Field[] {
  return entries.map(([camel, go, kind, pairs]) => ({
    camel,
    go,
    snake: snakeCaseOf(camel),
    kind,
    pairs: pairs !== undefined,
  }));
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

/** The fields each agent event's payload keeps, in camelCase; the rest (messages, content) go. */
const FIELD_ENTRIES: ReadonlyMap<string, readonly FieldEntry[]> = new Map([
  [IO_SESSION_START, SESSION],
  [IO_SESSION_END, SESSION],
  [AGENT_TURN_START, TURN],
  [AGENT_TURN_END, TURN],
  [
    LLM_REQUEST,
    [
      ...LLM_COMMON,
      ['model', 'Model', 'string'],
      ['role', 'Role', 'string'],
      ['maxTokens', 'MaxTokens', 'number'],
      ['temperature', 'Temperature', 'number'],
      ['stream', 'Stream', 'boolean'],
    ],
  ],
  [
    LLM_RESPONSE,
    [
      ...LLM_COMMON,
      ['model', 'Model', 'string'],
      ['content', 'Content', 'string'],
      ['usage', 'Usage', 'usage'],
      ['finishReason', 'FinishReason', 'string'],
      ['costUsd', 'CostUSD', 'number'],
    ],
  ],
  [
    LLM_STREAM_CHUNK,
    [...LLM_COMMON, ['content', 'Content', 'string'], ['index', 'Index', 'number']],
  ],
  [
    LLM_STREAM_END,
    [...LLM_COMMON, ['usage', 'Usage', 'usage'], ['finishReason', 'FinishReason', 'string']],
  ],
  [LLM_ERROR, [...LLM_COMMON, ['error', 'Error', 'string'], ['errorType', 'ErrorType', 'string']]],
  [SUBAGENT_SPAWN, SUBAGENT],
  [SUBAGENT_STARTED, SUBAGENT],
  [
    SUBAGENT_ITERATION,
    [
      ['spawnId', 'SpawnID', 'string', 'pairs'],
      ['iteration', 'Iteration', 'number'],
    ],
  ],
  [
    SUBAGENT_COMPLETE,
    [
      ...SUBAGENT,
      ['error', 'Error', 'string'],
      ['iterations', 'Iterations', 'number'],
      ['tokensUsed', 'TokensUsed', 'usage'],
      ['costUsd', 'CostUSD', 'number'],
    ],
  ],
]);

const FIELDS: ReadonlyMap<string, readonly Field[]> = new Map(
  [...FIELD_ENTRIES].map(([type, entries]) => [type, fieldsOf(entries)]),
);

/** Token counts: camelCase, Go's name, snake_case. */
const USAGE: readonly (readonly [camel: string, go: string, snake: string])[] = [
  ['inputTokens', 'PromptTokens', 'input_tokens'],
  ['outputTokens', 'CompletionTokens', 'output_tokens'],
  ['totalTokens', 'TotalTokens', 'total_tokens'],
];

/** Whether {@link normalizeAgentPayload} maps the payload of events of `type`. */
export function isAgentEventType(type: string): boolean {
  return FIELDS.has(type);
}

/**
 * The payload of an agent event (`io.session.*`, `agent.turn.*`, `llm.*`, `subagent.*`) as the
 * camelCase payload type of the events module, from any of three spellings: camelCase
 * (`turnId`, `usage.inputTokens`), Go's (`TurnID`, `Usage.PromptTokens`, tool calls' and tools'
 * `ID`/`Name`/`Description`) or snake_case (`turn_id`, `usage.input_tokens`, Nexus's
 * `session_id`); when a payload spells a field twice, camelCase wins, then Go's. Only the fields
 * tracing reads are kept: a Nexus `llm.request` carries the whole conversation, which nothing
 * downstream needs. An absent payload stays absent (Nexus writes `agent.turn.start` without
 * one).
 *
 * A request id or spawn id of the wrong type rejects the line, naming the field: without it the
 * event could end the wrong span. Any other field of the wrong type (a payload that is not an
 * object included) is left out and added to `dropped`, and the event goes on to end or mark its
 * span; a number where a usage object belongs (`"TokensUsed": 1832`, as Nexus documents the
 * delegate tool's output) is read as the total. Internal to wire.
 */
export function normalizeAgentPayload(
  type: string,
  payload: unknown,
  dropped: DroppedField[],
): unknown {
  const fields = FIELDS.get(type);
  if (fields === undefined || payload === undefined || payload === null) return payload;
  if (!isObject(payload)) {
    const message = `payload must be an object, got ${describeValue(payload)}`;
    dropped.push(new WrongField('payload', message));
    return undefined;
  }
  const result: JsonObject = {};
  for (const field of fields) {
    // camelCase first, then Go's, then snake_case: a field in our own spelling costs one look-up.
    let key = field.camel;
    let value = payload[key];
    if (value === undefined) {
      key = field.go;
      value = payload[key];
      if (value === undefined && field.snake !== undefined) {
        key = field.snake;
        value = payload[key];
      }
    }
    if (value === undefined || value === null) continue;
    const kind = field.kind;
    const checked =
      kind === 'usage' ? normalizeUsage(value, key, dropped) : checkScalar(value, key, kind);
    if (!isDropped(checked)) result[field.camel] = checked;
    else if (!field.pairs) dropped.push(checked);
    else return rejectLine('wrong_type', checked.message);
  }
  if (type === LLM_RESPONSE) {
    const calls = listOf(
      payload,
      ['toolCalls', 'ToolCalls', 'tool_calls'],
      ['id', 'ID'],
      ['name', 'Name'],
      dropped,
    );
    if (calls !== undefined) result.toolCalls = calls;
  } else if (type === LLM_REQUEST) {
    const tools = listOf(
      payload,
      ['tools', 'Tools', 'tools'],
      ['name', 'Name'],
      ['description', 'Description'],
      dropped,
    );
    if (tools !== undefined) result.tools = tools;
  }
  return result;
}

function checkScalar(value: unknown, key: string, kind: string): unknown {
  if (kind === 'number') {
    return typeof value === 'number' && Number.isFinite(value)
      ? value
      : wrongType(key, 'a finite number', value);
  }
  return typeof value === kind ? value : wrongType(key, `a ${kind}`, value);
}

/** A usage object with its counts checked one by one; a plain count is the total. */
function normalizeUsage(
  value: unknown,
  key: string,
  dropped: DroppedField[],
): JsonObject | WrongField {
  if (isCount(value)) return { totalTokens: value };
  if (!isObject(value)) return wrongType(key, 'an object or a number of tokens', value);
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
 * spellings.
 * An entry that is not an object, or a value in one that is not a string, is dropped.
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

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** Whether a checked value is what was wrong with it rather than the value. */
function isDropped(value: unknown): value is WrongField {
  return value instanceof WrongField;
}
