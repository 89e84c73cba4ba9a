import { SpanStatusCode, type Attributes } from '@opentelemetry/api';
import type { LlmFields, SubagentFields, UsageFields } from './agent-fields.js';
import type { AgentSpan } from './agent-span.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_EXCEPTION_MESSAGE,
  ATTR_EXCEPTION_TYPE,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_LLM_COST_USD,
  ATTR_LLM_STREAM_CHUNKS,
  ATTR_LLM_TOOL_CALLS,
  ATTR_SUBAGENT_ITERATIONS,
  ERROR_TYPE_OTHER,
  EVENT_EXCEPTION,
} from '../attribute-names.js';
import type { MessageFilter } from '../content-capture.js';

const NANOS_PER_SECOND = 1e9;

/**
 * Writes what ended a model call onto its span (as `applyResult` does for a tool call): the
 * response model, tokens, finish reason, cost, tool calls asked for, the streamed chunks and time
 * to first chunk; on `llm.error`, status ERROR with `error.type` (the payload's, else `_OTHER`)
 * and an `exception` event. Keeps what the instruments need on the span record.
 */
export function applyLlmOutcome(
  chat: AgentSpan,
  fields: LlmFields,
  failed: boolean,
  unixNano: bigint,
  filterMessage: MessageFilter,
): void {
  const attributes: Attributes = {};
  if (fields.model !== '') attributes[ATTR_GEN_AI_RESPONSE_MODEL] = fields.model;
  setUsage(attributes, fields.usage);
  chat.recordResponse(fields.model, fields.usage.inputTokens, fields.usage.outputTokens);
  if (fields.finishReason !== '') {
    attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [fields.finishReason];
  }
  if (fields.costUsd !== undefined) attributes[ATTR_LLM_COST_USD] = fields.costUsd;
  if (fields.toolCallIds.length > 0) attributes[ATTR_LLM_TOOL_CALLS] = fields.toolCallIds.length;
  if (chat.chunks > 0) {
    attributes[ATTR_LLM_STREAM_CHUNKS] = chat.chunks;
    if (chat.firstChunkUnixNano !== undefined) {
      attributes[ATTR_GEN_AI_TIME_TO_FIRST_CHUNK] =
        Math.max(0, Number(chat.firstChunkUnixNano - chat.startUnixNano)) / NANOS_PER_SECOND;
    }
  }
  chat.span.setAttributes(attributes);
  if (failed) {
    const message = fields.error || 'the model call failed';
    failAgentSpan(chat, fields.errorType, message, unixNano, filterMessage);
  }
}

/** Writes a sub-agent's completion onto its span: iterations, tokens, cost, and its error. */
export function applySubagentOutcome(
  subagent: AgentSpan,
  fields: SubagentFields,
  unixNano: bigint,
  filterMessage: MessageFilter,
): void {
  const attributes: Attributes = {};
  if (fields.iterations !== undefined) attributes[ATTR_SUBAGENT_ITERATIONS] = fields.iterations;
  setUsage(attributes, fields.usage);
  if (fields.costUsd !== undefined) attributes[ATTR_LLM_COST_USD] = fields.costUsd;
  subagent.span.setAttributes(attributes);
  if (fields.error !== '') failAgentSpan(subagent, '', fields.error, unixNano, filterMessage);
}

function failAgentSpan(
  agent: AgentSpan,
  errorType: string,
  message: string,
  unixNano: bigint,
  filterMessage: MessageFilter,
): void {
  const type = errorType !== '' ? errorType : ERROR_TYPE_OTHER;
  agent.fail(type);
  const shown = filterMessage(message);
  agent.span.setAttribute(ATTR_ERROR_TYPE, type);
  agent.span.addEvent(
    EVENT_EXCEPTION,
    { [ATTR_EXCEPTION_TYPE]: type, [ATTR_EXCEPTION_MESSAGE]: shown },
    agent.hrTime(unixNano),
  );
  agent.span.setStatus({ code: SpanStatusCode.ERROR, message: shown });
}

function setUsage(attributes: Attributes, usage: UsageFields): void {
  if (usage.inputTokens !== undefined) {
    attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = usage.inputTokens;
  }
  if (usage.outputTokens !== undefined) {
    attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = usage.outputTokens;
  }
}
