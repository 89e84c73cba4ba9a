/**
 * Reading agent payloads as they arrive from the bus or a journal: the TypeScript side's
 * camelCase fields and the Go original's (`TurnID`, `RequestID`, `Usage.PromptTokens`, …).
 * Anything missing or of the wrong type reads as empty, so a malformed payload still yields its
 * span rather than an error.
 */

type Loose = Record<string, unknown>;

const EMPTY: Loose = {};

function fieldsOf(payload: unknown): Loose {
  return payload !== null && typeof payload === 'object' ? (payload as Loose) : EMPTY;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function pick(fields: Loose, camel: string, go: string): unknown {
  const value = fields[camel];
  return value === undefined ? fields[go] : value;
}

/** Token counts, from `{inputTokens, outputTokens}` or Go's `{PromptTokens, CompletionTokens}`. */
export interface UsageFields {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

function readUsage(value: unknown): UsageFields {
  const fields = fieldsOf(value);
  return {
    inputTokens: count(fields.inputTokens ?? fields.PromptTokens ?? fields.input_tokens),
    outputTokens: count(fields.outputTokens ?? fields.CompletionTokens ?? fields.output_tokens),
  };
}

/** The session an `io.session.start` (or `io.session.end`) names: `session_id`, as Nexus writes it. */
export function readSessionId(payload: unknown): string {
  const fields = fieldsOf(payload);
  return text(fields.session_id ?? fields.sessionId ?? fields.SessionID);
}

/** The fields of an `agent.turn.start` or `agent.turn.end` payload. */
export interface TurnFields {
  turnId: string;
  iteration: number | undefined;
}

export function readTurn(payload: unknown): TurnFields {
  const fields = fieldsOf(payload);
  return {
    turnId: text(pick(fields, 'turnId', 'TurnID')),
    iteration: count(pick(fields, 'iteration', 'Iteration')),
  };
}

/** The fields of any `llm.*` payload tooltrace uses; each event fills what it carries. */
export interface LlmFields {
  requestId: string;
  turnId: string;
  model: string;
  role: string;
  usage: UsageFields;
  finishReason: string;
  costUsd: number | undefined;
  /** Tool call ids the model asked for (`llm.response`). */
  toolCallIds: string[];
  /** Tools the request declared, by name, with their description (`llm.request`). */
  tools: Array<{ name: string; description: string }>;
  maxTokens: number | undefined;
  temperature: number | undefined;
  error: string;
  errorType: string;
}

export function readLlm(payload: unknown): LlmFields {
  const fields = fieldsOf(payload);
  const calls = pick(fields, 'toolCalls', 'ToolCalls');
  const toolCallIds: string[] = [];
  if (Array.isArray(calls)) {
    for (const call of calls) {
      const id = text(pick(fieldsOf(call), 'id', 'ID'));
      if (id !== '') toolCallIds.push(id);
    }
  }
  const declared = pick(fields, 'tools', 'Tools');
  const tools: Array<{ name: string; description: string }> = [];
  if (Array.isArray(declared)) {
    for (const tool of declared) {
      const entry = fieldsOf(tool);
      const name = text(pick(entry, 'name', 'Name'));
      const description = text(pick(entry, 'description', 'Description'));
      if (name !== '' && description !== '') tools.push({ name, description });
    }
  }
  const error = pick(fields, 'error', 'Error');
  return {
    requestId: text(pick(fields, 'requestId', 'RequestID')),
    turnId: text(pick(fields, 'turnId', 'TurnID')),
    model: text(pick(fields, 'model', 'Model')),
    role: text(pick(fields, 'role', 'Role')),
    usage: readUsage(pick(fields, 'usage', 'Usage')),
    finishReason: text(pick(fields, 'finishReason', 'FinishReason')),
    costUsd: count(pick(fields, 'costUsd', 'CostUSD')),
    toolCallIds,
    tools,
    maxTokens: count(pick(fields, 'maxTokens', 'MaxTokens')),
    temperature: count(pick(fields, 'temperature', 'Temperature')),
    error: error instanceof Error ? error.message : text(error ?? fields.message),
    errorType: text(pick(fields, 'errorType', 'ErrorType')),
  };
}

/** The fields of any `subagent.*` payload tooltrace uses. */
export interface SubagentFields {
  spawnId: string;
  /** The task, else the sub-agent's name: what its span is named after. */
  title: string;
  parentTurnId: string;
  iteration: number | undefined;
  iterations: number | undefined;
  error: string;
  usage: UsageFields;
  costUsd: number | undefined;
}

export function readSubagent(payload: unknown): SubagentFields {
  const fields = fieldsOf(payload);
  const name = text(pick(fields, 'name', 'Name'));
  return {
    spawnId: text(pick(fields, 'spawnId', 'SpawnID')),
    title: name !== '' ? name : text(pick(fields, 'task', 'Task')),
    parentTurnId: text(pick(fields, 'parentTurnId', 'ParentTurnID')),
    iteration: count(pick(fields, 'iteration', 'Iteration')),
    iterations: count(pick(fields, 'iterations', 'Iterations')),
    error: text(pick(fields, 'error', 'Error')),
    usage: readUsage(pick(fields, 'tokensUsed', 'TokensUsed')),
    costUsd: count(pick(fields, 'costUsd', 'CostUSD')),
  };
}
