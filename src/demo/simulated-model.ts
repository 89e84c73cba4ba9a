import type { BusEvent, EventBus } from '../bus/index.js';
import {
  LLM_REQUEST,
  LLM_RESPONSE,
  LLM_STREAM_CHUNK,
  type LlmRequest,
  type LlmResponse,
  type LlmToolCallRequest,
} from '../events/index.js';
import type { DemoPace } from './demo-pace.js';

/** One scripted answer of {@link askModel}. */
export interface ScriptedAnswer {
  requestId: string;
  turnId: string;
  model: string;
  /** The text the model "streams", a word per chunk. */
  text: string;
  toolCalls?: LlmToolCallRequest[];
  inputTokens: number;
  /** How long the model "thinks" before its first chunk, before pacing. */
  thinkMs: number;
  /** The event the request is caused by (the turn or sub-agent it belongs to). */
  parent: BusEvent;
}

const NEVER = new AbortController().signal;

/**
 * A simulated model call (no network, no model): `llm.request`, a pause, the answer streamed a
 * word per `llm.stream.chunk`, then `llm.response` with token counts, as a provider plugin
 * would emit them. Resolves with the `llm.response` event, so the agent can act on it as the
 * cause of what follows (the tool calls it asked for).
 */
export async function askModel(
  bus: EventBus,
  pace: DemoPace,
  answer: ScriptedAnswer,
): Promise<BusEvent<LlmResponse>> {
  const { requestId, turnId, model } = answer;
  const tools = (answer.toolCalls ?? []).map((call) => ({
    name: call.name,
    description: `the demo's ${call.name.replace(/_/g, ' ')} tool`,
  }));
  const request: LlmRequest = { requestId, turnId, model, stream: true, maxTokens: 1024, tools };
  const requested = bus.emit(LLM_REQUEST, request, {
    source: 'demo.model',
    causation: { parentId: answer.parent.id },
  });
  await pace.sleep(answer.thinkMs, NEVER);
  const words = answer.text.split(' ');
  for (const [index, word] of words.entries()) {
    bus.emit(
      LLM_STREAM_CHUNK,
      { requestId, turnId, index, content: `${word} ` },
      { source: 'demo.model', causation: { parentId: requested.id } },
    );
    await pace.sleep(20, NEVER);
  }
  const response: LlmResponse = {
    requestId,
    turnId,
    model: `${model}-2026-11`,
    content: answer.text,
    usage: { inputTokens: answer.inputTokens, outputTokens: words.length * 3 },
    finishReason: (answer.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop',
    costUsd: (answer.inputTokens * 2 + words.length * 3 * 8) / 1_000_000,
  };
  if (answer.toolCalls !== undefined) response.toolCalls = answer.toolCalls;
  return bus.emit(LLM_RESPONSE, response, {
    source: 'demo.model',
    causation: { parentId: requested.id },
  });
}
