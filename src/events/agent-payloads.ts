/**
 * Payloads of the agent events around tool calls, in the TypeScript side's camelCase: what the
 * tracer reads, and what a program emitting these events on the bus writes. The wire decoder
 * maps the Nexus Go field names (`TurnID`, `RequestID`, `Usage.PromptTokens`, …) and snake_case
 * ones (`session_id`, `turn_id`) onto these; every field is optional because journals leave most
 * of them out.
 */

/** Payload of `io.session.start`. */
export interface SessionStart {
  /** The session (conversation) id; a journal line spells it `session_id`, as Nexus writes it. */
  sessionId?: string;
}

/** Payload of `io.session.end`. */
export interface SessionEnd {
  sessionId?: string;
}

/** Payload of `agent.turn.start` and `agent.turn.end`. */
export interface TurnInfo {
  turnId?: string;
  /** Which iteration of the agent loop this turn is (1, 2, …). */
  iteration?: number;
  sessionId?: string;
}

/** A tool the model may call, as declared in an `llm.request`. */
export interface LlmToolDefinition {
  name: string;
  description?: string;
}

/** A tool call the model asked for, in an `llm.response`. */
export interface LlmToolCallRequest {
  id: string;
  name: string;
  /** The arguments as JSON text. */
  arguments?: string;
}

/** Token counts of a model call. */
export interface LlmUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

/** Payload of `llm.request`. */
export interface LlmRequest {
  /** Pairs the request with its response. */
  requestId?: string;
  /** The model asked for. */
  model?: string;
  /** A model role (`reasoning`, `quick`) when no model is named. */
  role?: string;
  turnId?: string;
  tools?: LlmToolDefinition[];
  maxTokens?: number;
  temperature?: number;
  stream?: boolean;
}

/** Payload of `llm.response`. */
export interface LlmResponse {
  requestId?: string;
  /** The model that answered. */
  model?: string;
  turnId?: string;
  content?: string;
  toolCalls?: LlmToolCallRequest[];
  usage?: LlmUsage;
  finishReason?: string;
  /** What the call cost, in US dollars. */
  costUsd?: number;
}

/** Payload of `llm.stream.chunk`. */
export interface LlmStreamChunk {
  requestId?: string;
  turnId?: string;
  content?: string;
  index?: number;
}

/** Payload of `llm.stream.end`. */
export interface LlmStreamEnd {
  requestId?: string;
  turnId?: string;
  usage?: LlmUsage;
  finishReason?: string;
}

/** Payload of `llm.error`. */
export interface LlmError {
  requestId?: string;
  turnId?: string;
  /** The error's message. */
  error?: string;
  /** A low-cardinality name for the kind of failure (`rate_limit`, `timeout`). */
  errorType?: string;
}

/** Payload of `subagent.spawn`. */
export interface SubagentSpawn {
  spawnId?: string;
  /** What the sub-agent should accomplish; names its span. */
  task?: string;
  /** The sub-agent's name, when it has one. */
  name?: string;
  parentTurnId?: string;
}

/** Payload of `subagent.started`. */
export type SubagentStarted = SubagentSpawn;

/** Payload of `subagent.iteration`. */
export interface SubagentIteration {
  spawnId?: string;
  iteration?: number;
}

/** Payload of `subagent.complete`. */
export interface SubagentComplete {
  spawnId?: string;
  /** Set when the sub-agent failed. */
  error?: string;
  iterations?: number;
  tokensUsed?: LlmUsage;
  costUsd?: number;
  parentTurnId?: string;
}
