/** Payload of `tool.invoke`: one call of one tool. */
export interface ToolCall {
  /** Tool call id, unique per call (for example `tc_1`). */
  id: string;
  /** Tool name. */
  name: string;
  arguments: Record<string, unknown>;
  turnId?: string;
  /** Id of the tool call that started this one, when a tool calls a tool. */
  parentCallId?: string;
  /** What the tool does, as declared to the model; becomes `gen_ai.tool.description`. */
  description?: string;
}

/** Payload of `tool.result`: the final outcome of a call. */
export interface ToolResult {
  id: string;
  name: string;
  /** The tool's output: the payload itself when it is a string, else its JSON. */
  output: string;
  /** Set when the call failed: the error's message. */
  error?: string;
  /** Set when the call failed because it was cancelled (its signal aborted). */
  cancelled?: boolean;
  turnId?: string;
  outputStructured?: unknown;
}

/** Fields every `tool.stream.*` payload carries; the keys are the seed's (snake case). */
export interface ToolStreamBase {
  tool_name: string;
  tool_id: string;
  turn_id: string;
  /** Monotonic per call, from 1. */
  sequence: number;
  payload: unknown;
}

/** Payload of `tool.stream.progress`. */
export interface ToolStreamProgress extends ToolStreamBase {
  /** 0..1 when known, -1 otherwise. */
  progress: number;
}

/** Payload of `tool.stream.partial`. */
export type ToolStreamPartial = ToolStreamBase;
