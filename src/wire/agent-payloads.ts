import {
  AGENT_TURN_END,
  AGENT_TURN_START,
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
import { describeValue, rejectLine, type DecodeFailure } from './decode-result.js';

type JsonObject = Record<string, unknown>;

/** One field of a payload: its camelCase name, the Go name, and what it must be. */
type Field = readonly [camel: string, go: string, kind: 'string' | 'number' | 'boolean' | 'usage'];

const TURN: readonly Field[] = [
  ['turnId', 'TurnID', 'string'],
  ['iteration', 'Iteration', 'number'],
  ['sessionId', 'SessionID', 'string'],
];
const LLM_COMMON: readonly Field[] = [
  ['requestId', 'RequestID', 'string'],
  ['turnId', 'TurnID', 'string'],
];
const SUBAGENT: readonly Field[] = [
  ['spawnId', 'SpawnID', 'string'],
  ['task', 'Task', 'string'],
  ['name', 'Name', 'string'],
  ['parentTurnId', 'ParentTurnID', 'string'],
];

/** The fields each agent event's payload keeps, in camelCase; the rest (messages, content) go. */
const FIELDS: ReadonlyMap<string, readonly Field[]> = new Map([
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
      ['spawnId', 'SpawnID', 'string'],
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

const USAGE: readonly (readonly [camel: string, go: string])[] = [
  ['inputTokens', 'PromptTokens'],
  ['outputTokens', 'CompletionTokens'],
  ['totalTokens', 'TotalTokens'],
];

/** Whether {@link normalizeAgentPayload} maps the payload of events of `type`. */
export function isAgentEventType(type: string): boolean {
  return FIELDS.has(type);
}

/**
 * The payload of an agent event (`agent.turn.*`, `llm.*`, `subagent.*`) in the TypeScript side's
 * camelCase, from either spelling (`TurnID` or `turnId`, `Usage.PromptTokens` or
 * `usage.inputTokens`, tool calls' and tools' `ID`/`Name`/`Description`). Only the fields
 * tracing reads are kept: a Nexus `llm.request` carries the whole conversation, which nothing
 * downstream needs. An absent payload stays absent (Nexus writes `agent.turn.start` without
 * one); a field of the wrong type rejects the line, naming the field. Internal to wire.
 */
export function normalizeAgentPayload(type: string, payload: unknown): unknown {
  const fields = FIELDS.get(type);
  if (fields === undefined || payload === undefined || payload === null) return payload;
  if (!isObject(payload)) {
    return rejectLine('wrong_type', `payload must be an object, got ${describeValue(payload)}`);
  }
  const result: JsonObject = {};
  for (const [camel, go, kind] of fields) {
    const key = payload[camel] !== undefined ? camel : go;
    const value = payload[key];
    if (value === undefined || value === null) continue;
    const checked = kind === 'usage' ? normalizeUsage(value, key) : checkScalar(value, key, kind);
    if (isFailure(checked)) return checked;
    result[camel] = checked;
  }
  if (type === LLM_RESPONSE) {
    const calls = listOf(payload, 'toolCalls', 'ToolCalls', ['id', 'ID'], ['name', 'Name']);
    if (isFailure(calls)) return calls;
    if (calls !== undefined) result.toolCalls = calls;
  } else if (type === LLM_REQUEST) {
    const tools = listOf(
      payload,
      'tools',
      'Tools',
      ['name', 'Name'],
      ['description', 'Description'],
    );
    if (isFailure(tools)) return tools;
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

function normalizeUsage(value: unknown, key: string): JsonObject | DecodeFailure {
  if (!isObject(value)) return wrongType(key, 'an object', value);
  const usage: JsonObject = {};
  for (const [camel, go] of USAGE) {
    const used = value[camel] !== undefined ? camel : go;
    const count = value[used];
    if (count === undefined || count === null) continue;
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
      return wrongType(`${key}.${used}`, 'a non-negative integer', count);
    }
    usage[camel] = count;
  }
  return usage;
}

/**
 * A list of `{[first]: string, [second]: string}` entries (tool calls, tools) under either key,
 * with entries that are not objects rejected and their strings checked.
 */
function listOf(
  payload: JsonObject,
  camel: string,
  go: string,
  first: readonly [string, string],
  second: readonly [string, string],
): JsonObject[] | undefined | DecodeFailure {
  const key = payload[camel] !== undefined ? camel : go;
  const list = payload[key];
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list)) return wrongType(key, 'an array', list);
  const entries: JsonObject[] = [];
  for (const [index, entry] of list.entries()) {
    if (!isObject(entry)) return wrongType(`${key}[${index}]`, 'an object', entry);
    const out: JsonObject = {};
    for (const [name, goName] of [first, second]) {
      const used = entry[name] !== undefined ? name : goName;
      const value = entry[used];
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string')
        return wrongType(`${key}[${index}].${used}`, 'a string', value);
      out[name] = value;
    }
    entries.push(out);
  }
  return entries;
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isFailure(value: unknown): value is DecodeFailure {
  return isObject(value) && value.ok === false && typeof value.reason === 'string';
}

function wrongType(key: string, expected: string, value: unknown): DecodeFailure {
  return rejectLine(
    'wrong_type',
    `payload.${key} must be ${expected}, got ${describeValue(value)}`,
  );
}
