import type {
  LlmError,
  LlmRequest,
  LlmResponse,
  LlmToolCallRequest,
  LlmToolDefinition,
  LlmUsage,
  SessionStart,
  SubagentComplete,
  SubagentIteration,
  SubagentSpawn,
  TurnInfo,
} from '../../events/index.js';
import { fieldsOf, text } from '../loose-fields.js';

/**
 * Reading agent payloads as the camelCase payload types of the events module, their one
 * spelling: the wire decoder has already turned a journal's Go (`TurnID`, `Usage.PromptTokens`)
 * or snake_case keys (`session_id`) into it. A payload on the bus is still unchecked data, so
 * anything missing or of the wrong type reads as empty, and a malformed payload still yields its
 * span rather than an error.
 */

/** Every field any `llm.*` payload carries. */
type LlmPayload = LlmRequest & LlmResponse & LlmError;

/** Every field any `subagent.*` payload carries. */
type SubagentPayload = SubagentSpawn & SubagentIteration & SubagentComplete;

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Token counts (`{inputTokens, outputTokens}`). */
export interface UsageFields {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

function readUsage(value: unknown): UsageFields {
  const fields = fieldsOf<LlmUsage>(value);
  return { inputTokens: count(fields.inputTokens), outputTokens: count(fields.outputTokens) };
}

/** The session an `io.session.start` (or `io.session.end`) names (`sessionId`). */
export function readSessionId(payload: unknown): string {
  return text(fieldsOf<SessionStart>(payload).sessionId);
}

/** The fields of an `agent.turn.start` or `agent.turn.end` payload. */
export interface TurnFields {
  turnId: string;
  iteration: number | undefined;
}

export function readTurn(payload: unknown): TurnFields {
  const fields = fieldsOf<TurnInfo>(payload);
  return { turnId: text(fields.turnId), iteration: count(fields.iteration) };
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
  const fields = fieldsOf<LlmPayload>(payload);
  const calls = fields.toolCalls;
  const toolCallIds: string[] = [];
  if (Array.isArray(calls)) {
    for (const call of calls) {
      const id = text(fieldsOf<LlmToolCallRequest>(call).id);
      if (id !== '') toolCallIds.push(id);
    }
  }
  const declared = fields.tools;
  const tools: Array<{ name: string; description: string }> = [];
  if (Array.isArray(declared)) {
    for (const tool of declared) {
      const entry = fieldsOf<LlmToolDefinition>(tool);
      const name = text(entry.name);
      const description = text(entry.description);
      if (name !== '' && description !== '') tools.push({ name, description });
    }
  }
  const error = fields.error;
  return {
    requestId: text(fields.requestId),
    turnId: text(fields.turnId),
    model: text(fields.model),
    role: text(fields.role),
    usage: readUsage(fields.usage),
    finishReason: text(fields.finishReason),
    costUsd: count(fields.costUsd),
    toolCallIds,
    tools,
    maxTokens: count(fields.maxTokens),
    temperature: count(fields.temperature),
    // An Error object, as a program on the bus may hand one over, reads as its message.
    error: error instanceof Error ? error.message : text(error),
    errorType: text(fields.errorType),
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
  const fields = fieldsOf<SubagentPayload>(payload);
  const name = text(fields.name);
  return {
    spawnId: text(fields.spawnId),
    title: name !== '' ? name : text(fields.task),
    parentTurnId: text(fields.parentTurnId),
    iteration: count(fields.iteration),
    iterations: count(fields.iterations),
    error: text(fields.error),
    usage: readUsage(fields.tokensUsed),
    costUsd: count(fields.costUsd),
  };
}
