/** A value a tool may give its span as an attribute: what an OpenTelemetry attribute holds. */
export type ToolAttributeValue =
  string | number | boolean | readonly string[] | readonly number[] | readonly boolean[];

/**
 * Span attributes a tool call carries on its `tool.invoke` or `tool.result` (for example
 * `mcp.method.name`, `jsonrpc.request.id`). The tracer puts them on the call's `execute_tool`
 * span; they never replace the tracer's own (`gen_ai.operation.name`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, `error.type`, `tooltrace.*`).
 */
export type ToolAttributes = Readonly<Record<string, ToolAttributeValue>>;

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
  /** Span attributes known when the call starts; the span gets them as it starts. */
  attributes?: ToolAttributes;
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
  /**
   * A low-cardinality name for the kind of failure (for example `tool_error`, `-32602`,
   * `TypeError`); the span's `error.type`. Without it a failure is `_OTHER`.
   */
  errorType?: string;
  /** Span attributes the tool reported while it ran; the span gets them as it ends. */
  attributes?: ToolAttributes;
  turnId?: string;
  outputStructured?: unknown;
}

/**
 * Fields every `tool.stream.*` payload carries. The one place the typed payloads are snake_case:
 * these keys are the seed's, written so by the Go original and by every bridge, on the bus and on
 * every journal line, and read by every consumer that renders a stream; the wire decoder passes
 * them through without a copy (most lines of a journal are stream events).
 */
export interface ToolStreamBase {
  tool_name: string;
  tool_id: string;
  turn_id: string;
  /** Monotonic per call, from 1. */
  sequence: number;
  payload: unknown;
  /**
   * Attributes of this event (the tool event's `attributes`): the tracer puts them on the
   * event's span event (and log record) as well as on the call's span. Absent when it has none.
   */
  attributes?: ToolAttributes;
}

/** Payload of `tool.stream.progress`. */
export interface ToolStreamProgress extends ToolStreamBase {
  /** 0..1 when known, -1 otherwise. */
  progress: number;
}

/** Payload of `tool.stream.partial`. */
export type ToolStreamPartial = ToolStreamBase;
