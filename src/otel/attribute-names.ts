import type { Attributes } from '@opentelemetry/api';

/**
 * Every attribute, event and value name tooltrace writes on spans, in one place. The `gen_ai.*`,
 * `error.type` and `exception.*` names are copied from the OpenTelemetry semantic conventions
 * (GenAI tool execution, status Development) instead of imported from the package's unstable
 * `incubating` entry point; the bus's own ids live under the single `tooltrace.` prefix.
 */

/** `gen_ai.operation.name`: always {@link EXECUTE_TOOL} on a tool span. */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** `gen_ai.tool.name`: the tool's name. */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** `gen_ai.tool.call.id`: the tool call id (`tc_1`). */
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** `gen_ai.tool.type`: always {@link TOOL_TYPE_FUNCTION} for bus tools. */
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/** `gen_ai.tool.call.arguments`: the call's arguments as JSON; only with content capture. */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** `gen_ai.tool.call.result`: the call's output; only with content capture. */
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
/** `gen_ai.conversation.id`: the bus session id. */
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
/** `gen_ai.agent.id`: the bus agent id. */
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id';
/** `gen_ai.agent.name`: the agent's name (option `agentName`, else the bus agent id). */
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
/** `gen_ai.tool.description`: what the tool does, when the call or the model's request says. */
export const ATTR_GEN_AI_TOOL_DESCRIPTION = 'gen_ai.tool.description';
/** `gen_ai.request.model`: the model an `llm.request` asked for. */
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
/** `gen_ai.response.model`: the model that answered. */
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
/** `gen_ai.usage.input_tokens`: prompt tokens of a model call (or a sub-agent's total). */
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
/** `gen_ai.usage.output_tokens`: completion tokens of a model call (or a sub-agent's total). */
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
/** `gen_ai.response.finish_reasons`: why the model stopped, as an array. */
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
/** `gen_ai.response.time_to_first_chunk`: request to first streamed chunk, in seconds. */
export const ATTR_GEN_AI_TIME_TO_FIRST_CHUNK = 'gen_ai.response.time_to_first_chunk';
/** `gen_ai.request.max_tokens`: the most tokens the request allowed. */
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
/** `gen_ai.request.temperature`: the sampling temperature asked for. */
export const ATTR_GEN_AI_REQUEST_TEMPERATURE = 'gen_ai.request.temperature';
/** `error.type`: what kind of failure ended the call. */
export const ATTR_ERROR_TYPE = 'error.type';
/** `exception.type` on the {@link EVENT_EXCEPTION} span event. */
export const ATTR_EXCEPTION_TYPE = 'exception.type';
/** `exception.message` on the {@link EVENT_EXCEPTION} span event. */
export const ATTR_EXCEPTION_MESSAGE = 'exception.message';

/** Value of `gen_ai.operation.name` and the first word of every tool span's name. */
export const EXECUTE_TOOL = 'execute_tool';
/** Value of `gen_ai.operation.name` on turn and sub-agent spans, and their names' first word. */
export const INVOKE_AGENT = 'invoke_agent';
/** Value of `gen_ai.operation.name` on model-call spans, and their names' first word. */
export const CHAT = 'chat';
/** First word of the root span's name with `traceBy: 'session'`. */
export const SESSION = 'session';
/** Value of `gen_ai.tool.type`: a bus tool is a function executed by the agent's side. */
export const TOOL_TYPE_FUNCTION = 'function';
/** Span event name of a failed call, per the OpenTelemetry exception conventions. */
export const EVENT_EXCEPTION = 'exception';

/** `error.type` of a call that was cancelled (its `tool.result` carries `cancelled: true`). */
export const ERROR_TYPE_CANCELLED = 'cancelled';
/**
 * `error.type` of a failure that names no kind of its own: the semantic conventions' fallback
 * value for an error type that is not known.
 */
export const ERROR_TYPE_OTHER = '_OTHER';
/** `error.type` of a call ended because it went quiet for `idleTimeoutMs`. */
export const ERROR_TYPE_ABANDONED = 'abandoned';

/** `tooltrace.event.id`: id of the `tool.invoke` event that started the span. */
export const ATTR_EVENT_ID = 'tooltrace.event.id';
/** `tooltrace.event.parent_id`: causal parent of the `tool.invoke` event. */
export const ATTR_EVENT_PARENT_ID = 'tooltrace.event.parent_id';
/** `tooltrace.event.sequence`: bus sequence of the `tool.invoke` event. */
export const ATTR_EVENT_SEQUENCE = 'tooltrace.event.sequence';
/** `tooltrace.event.source`: the component that emitted the `tool.invoke` event. */
export const ATTR_EVENT_SOURCE = 'tooltrace.event.source';
/** `tooltrace.result.event.id`: id of the `tool.result` event that ended the span. */
export const ATTR_RESULT_EVENT_ID = 'tooltrace.result.event.id';
/** `tooltrace.turn.id`: the agent turn the call belongs to. */
export const ATTR_TURN_ID = 'tooltrace.turn.id';
/** `tooltrace.depth`: causation depth (0 for the top-level agent, 1 for a sub-agent, …). */
export const ATTR_DEPTH = 'tooltrace.depth';
/** `tooltrace.tool.parent_call.id`: the tool call that started this one, when reported. */
export const ATTR_PARENT_CALL_ID = 'tooltrace.tool.parent_call.id';
/** `tooltrace.tool.cancelled`: `true` on a cancelled call. */
export const ATTR_TOOL_CANCELLED = 'tooltrace.tool.cancelled';
/** `tooltrace.end_reason`: why the span ended, one of {@link EndReason}. */
export const ATTR_END_REASON = 'tooltrace.end_reason';
/** `tooltrace.invoke.missing`: `true` when no `tool.invoke` was ever seen for the call. */
export const ATTR_INVOKE_MISSING = 'tooltrace.invoke.missing';
/** `tooltrace.invoke.late`: `true` when the `tool.invoke` arrived after its span was started. */
export const ATTR_INVOKE_LATE = 'tooltrace.invoke.late';

/** `tooltrace.span.kind`: what an agent span stands for: `session`, `turn`, `chat`, `subagent`. */
export const ATTR_SPAN_KIND = 'tooltrace.span.kind';
/** `tooltrace.turn.iteration`: which iteration of the agent loop a turn is. */
export const ATTR_TURN_ITERATION = 'tooltrace.turn.iteration';
/** `tooltrace.llm.request.id`: the id pairing an `llm.request` with its response. */
export const ATTR_LLM_REQUEST_ID = 'tooltrace.llm.request.id';
/** `tooltrace.llm.role`: the model role an `llm.request` asked for when it named no model. */
export const ATTR_LLM_ROLE = 'tooltrace.llm.role';
/** `tooltrace.llm.cost_usd`: what a model call (or a sub-agent) cost, in US dollars. */
export const ATTR_LLM_COST_USD = 'tooltrace.llm.cost_usd';
/** `tooltrace.llm.stream.chunks`: chunks a streamed model answer arrived in. */
export const ATTR_LLM_STREAM_CHUNKS = 'tooltrace.llm.stream.chunks';
/** `tooltrace.llm.tool_calls`: how many tool calls the model asked for. */
export const ATTR_LLM_TOOL_CALLS = 'tooltrace.llm.tool_calls';
/** `tooltrace.start_inferred`: `true` when the start event never came and the start is a guess. */
export const ATTR_START_INFERRED = 'tooltrace.start_inferred';
/** `tooltrace.subagent.spawn_id`: the id pairing a sub-agent's spawn with its completion. */
export const ATTR_SUBAGENT_SPAWN_ID = 'tooltrace.subagent.spawn_id';
/** `tooltrace.subagent.iterations`: iterations a sub-agent ran. */
export const ATTR_SUBAGENT_ITERATIONS = 'tooltrace.subagent.iterations';
/** `tooltrace.event.payload` on a span event made from another bus event; only with capture. */
export const ATTR_EVENT_PAYLOAD = 'tooltrace.event.payload';
/** `tooltrace.events.recorded`: other bus events kept as span events on this span. */
export const ATTR_EVENTS_RECORDED = 'tooltrace.events.recorded';
/** `tooltrace.events.coalesced`: other bus events only counted on this span. */
export const ATTR_EVENTS_COALESCED = 'tooltrace.events.coalesced';

/** `tooltrace.inflight`: `true` on an in-flight snapshot span, never on a final span. */
export const ATTR_INFLIGHT = 'tooltrace.inflight';
/** `tooltrace.inflight.update`: which snapshot of the call this is (1, 2, 3, …). */
export const ATTR_INFLIGHT_UPDATE = 'tooltrace.inflight.update';
/** `tooltrace.inflight.updates`: on a final span, how many snapshots of it were exported. */
export const ATTR_INFLIGHT_UPDATES = 'tooltrace.inflight.updates';
/** What an in-flight snapshot span's name ends with, after its call's span name. */
export const INFLIGHT_NAME_SUFFIX = ' (in flight)';

/** `tooltrace.stream.partial.count`: partial events the call published. */
export const ATTR_STREAM_PARTIAL_COUNT = 'tooltrace.stream.partial.count';
/** `tooltrace.stream.progress.count`: progress events the call published. */
export const ATTR_STREAM_PROGRESS_COUNT = 'tooltrace.stream.progress.count';
/** `tooltrace.stream.partial.bytes`: total size of the partial payloads (see `payloadBytes`). */
export const ATTR_STREAM_PARTIAL_BYTES = 'tooltrace.stream.partial.bytes';
/** `tooltrace.stream.time_to_first_partial_ms`: invoke to first partial, in milliseconds. */
export const ATTR_STREAM_TIME_TO_FIRST_PARTIAL_MS = 'tooltrace.stream.time_to_first_partial_ms';
/** `tooltrace.stream.last_progress`: the last known progress, 0..1. */
export const ATTR_STREAM_LAST_PROGRESS = 'tooltrace.stream.last_progress';
/** `tooltrace.stream.events.recorded`: stream events kept as span events. */
export const ATTR_STREAM_EVENTS_RECORDED = 'tooltrace.stream.events.recorded';
/** `tooltrace.stream.events.coalesced`: stream events only counted in this summary. */
export const ATTR_STREAM_EVENTS_COALESCED = 'tooltrace.stream.events.coalesced';

/** `tooltrace.stream.progress` on a progress span event, when the tool knows it (>= 0). */
export const ATTR_STREAM_PROGRESS = 'tooltrace.stream.progress';
/** `tooltrace.stream.payload` on a stream span event; only with content capture. */
export const ATTR_STREAM_PAYLOAD = 'tooltrace.stream.payload';

/**
 * Why a span ended: its result (or, for agent spans, their end event), idleness, the open-span
 * bound, or shutdown.
 */
export type EndReason = 'result' | 'abandoned' | 'evicted' | 'shutdown';

/**
 * Attributes of a `tool.stream.partial` span event: `tooltrace.stream.sequence` and
 * `tooltrace.stream.payload.bytes`. Written with literal keys, and the only place that writes
 * them, because one is built per stream event: V8 builds a literal-keyed object from a
 * template, a computed-key one key by key.
 */
export function partialEventAttributes(sequence: number, bytes: number): Attributes {
  return sequence > 0
    ? { 'tooltrace.stream.sequence': sequence, 'tooltrace.stream.payload.bytes': bytes }
    : { 'tooltrace.stream.payload.bytes': bytes };
}

/**
 * Attributes of a `tool.stream.progress` span event: the sequence, and the progress when the
 * tool knows it (>= 0). Literal keys, like {@link partialEventAttributes}.
 */
export function progressEventAttributes(sequence: number, progress: number): Attributes {
  if (sequence > 0) {
    return progress >= 0
      ? { 'tooltrace.stream.sequence': sequence, 'tooltrace.stream.progress': progress }
      : { 'tooltrace.stream.sequence': sequence };
  }
  return progress >= 0 ? { 'tooltrace.stream.progress': progress } : {};
}

/** The name of a tool call's span: `execute_tool {tool name}`, just `execute_tool` without one. */
export function toolSpanName(toolName: string): string {
  return toolName === '' ? EXECUTE_TOOL : `${EXECUTE_TOOL} ${toolName}`;
}

/**
 * The attributes that say which tool call a span is about, shared by the call's span and its
 * in-flight snapshots: operation, tool name and type, and the call, conversation and agent ids
 * when known (`''` leaves one out).
 */
export function toolCallAttributes(
  toolName: string,
  callId: string,
  sessionId: string,
  agentId: string,
  agentName: string,
): Attributes {
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: toolName,
    [ATTR_GEN_AI_TOOL_TYPE]: TOOL_TYPE_FUNCTION,
  };
  if (callId !== '') attributes[ATTR_GEN_AI_TOOL_CALL_ID] = callId;
  if (sessionId !== '') attributes[ATTR_GEN_AI_CONVERSATION_ID] = sessionId;
  if (agentId !== '') attributes[ATTR_GEN_AI_AGENT_ID] = agentId;
  if (agentName !== '') attributes[ATTR_GEN_AI_AGENT_NAME] = agentName;
  return attributes;
}

/** The name of a turn or sub-agent span: `invoke_agent {name}`, just `invoke_agent` without one. */
export function agentSpanName(agentName: string): string {
  return agentName === '' ? INVOKE_AGENT : `${INVOKE_AGENT} ${agentName}`;
}

/** The name of a model-call span: `chat {model}`, just `chat` when the model is unknown. */
export function chatSpanName(model: string): string {
  return model === '' ? CHAT : `${CHAT} ${model}`;
}
