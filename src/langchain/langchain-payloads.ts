import type { LlmToolCallRequest, LlmToolDefinition, LlmUsage } from '../events/index.js';
import { toolOutput } from '../streamtool/tool-output.js';

/**
 * Readers of what LangChain hands its callbacks (serialized runnables, run metadata, model
 * results, tool messages). They read fields by name and never throw on a shape they do not
 * know: a field that is missing or of another type is left out.
 */

type Loose = Record<string, unknown> | undefined;

function record(value: unknown): Loose {
  return value !== null && typeof value === 'object'
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Whether a serialized runnable is a LangGraph graph (`["langgraph", "pregel", …]`). */
export function isGraph(serialized: unknown): boolean {
  const id = record(serialized)?.id;
  return Array.isArray(id) && id[0] === 'langgraph';
}

/** The LangGraph thread a run belongs to (`configurable.thread_id`, copied into its metadata). */
export function threadIdOf(metadata: unknown): string | undefined {
  const threadId = record(metadata)?.thread_id;
  if (typeof threadId === 'number') return String(threadId);
  return text(threadId);
}

/**
 * The model a chat run asks for: the model name LangChain reports for tracing
 * (`ls_model_name`), else the invocation parameters' `model`/`model_name`/`modelName`, else the
 * run's name, else the model class.
 */
export function requestedModel(
  serialized: unknown,
  extraParams: unknown,
  metadata: unknown,
  runName: string | undefined,
): string {
  const params = record(record(extraParams)?.invocation_params);
  const id = record(serialized)?.id;
  return (
    text(record(metadata)?.ls_model_name) ??
    text(params?.model) ??
    text(params?.model_name) ??
    text(params?.modelName) ??
    text(runName) ??
    (Array.isArray(id) ? text(id.at(-1)) : undefined) ??
    ''
  );
}

/**
 * The tools a chat run offers the model, from its invocation parameters: OpenAI's shape
 * (`{ type: 'function', function: { name, description } }`) or a flat `{ name, description }`
 * (Anthropic, Google). They describe the calls' spans when the tools were not wrapped.
 */
export function declaredTools(extraParams: unknown): LlmToolDefinition[] | undefined {
  const tools = record(record(extraParams)?.invocation_params)?.tools;
  if (!Array.isArray(tools)) return undefined;
  const declared: LlmToolDefinition[] = [];
  for (const entry of tools) {
    const tool = record(record(entry)?.function) ?? record(entry);
    const name = text(tool?.name);
    if (name === undefined) continue;
    const description = text(tool?.description);
    declared.push(description === undefined ? { name } : { name, description });
  }
  return declared.length > 0 ? declared : undefined;
}

/**
 * A tool run's arguments: LangChain passes them as JSON text (an object for structured tools,
 * a string for string tools); anything but an object becomes `{ input }`.
 */
export function toolArguments(input: unknown): Record<string, unknown> {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      value = input;
    }
  }
  const object = record(value);
  return object !== undefined && !Array.isArray(value) ? object : { input: value };
}

/** What a model run answered, as `llm.response` carries it. */
export interface ModelAnswer {
  model: string | undefined;
  usage: LlmUsage | undefined;
  toolCalls: LlmToolCallRequest[] | undefined;
  finishReason: string | undefined;
  content: string | undefined;
}

/**
 * Reads a model run's result (`LLMResult`): the first generation's message for the response
 * model, tool calls, finish reason and token usage (`usage_metadata`), else the token usage the
 * provider reported for the whole run (`llmOutput.tokenUsage`, or `estimatedTokenUsage`).
 */
export function modelAnswer(output: unknown): ModelAnswer {
  const result = record(output);
  const generations = result?.generations;
  const batch: unknown = Array.isArray(generations) ? generations[0] : undefined;
  const first: unknown = Array.isArray(batch) ? batch[0] : undefined;
  const generation = record(first);
  const message = record(generation?.message);
  const responseMetadata = record(message?.response_metadata);
  const llmOutput = record(result?.llmOutput);
  const usage =
    usageMetadata(message?.usage_metadata) ??
    tokenUsage(llmOutput?.tokenUsage) ??
    tokenUsage(llmOutput?.estimatedTokenUsage);
  const finishReason =
    text(record(generation?.generationInfo)?.finish_reason) ??
    text(responseMetadata?.finish_reason) ??
    text(responseMetadata?.stop_reason);
  const content = message?.content ?? generation?.text;
  return {
    model:
      text(responseMetadata?.model_name) ??
      text(responseMetadata?.model) ??
      text(llmOutput?.model_name),
    usage,
    toolCalls: toolCallsOf(message?.tool_calls),
    finishReason,
    content: content === undefined || content === '' ? undefined : toolOutput(content),
  };
}

function usageMetadata(value: unknown): LlmUsage | undefined {
  const usage = record(value);
  if (usage === undefined) return undefined;
  return usageOf(usage.input_tokens, usage.output_tokens, usage.total_tokens);
}

function tokenUsage(value: unknown): LlmUsage | undefined {
  const usage = record(value);
  if (usage === undefined) return undefined;
  return usageOf(usage.promptTokens, usage.completionTokens, usage.totalTokens);
}

function usageOf(input: unknown, output: unknown, total: unknown): LlmUsage | undefined {
  const usage: LlmUsage = {};
  const inputTokens = count(input);
  const outputTokens = count(output);
  const totalTokens = count(total);
  if (inputTokens !== undefined) usage.inputTokens = inputTokens;
  if (outputTokens !== undefined) usage.outputTokens = outputTokens;
  if (totalTokens !== undefined) usage.totalTokens = totalTokens;
  return Object.keys(usage).length > 0 ? usage : undefined;
}

function toolCallsOf(value: unknown): LlmToolCallRequest[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const calls: LlmToolCallRequest[] = [];
  for (const entry of value) {
    const call = record(entry);
    const id = text(call?.id);
    const name = text(call?.name);
    if (id === undefined || name === undefined) continue;
    calls.push({ id, name, arguments: toolOutput(call?.args ?? {}) });
  }
  return calls.length > 0 ? calls : undefined;
}

/** How a tool run ended, read from what `handleToolEnd` got. */
export interface ToolEnd {
  output: string;
  /** Set when the tool answered with a `ToolMessage` of status `error`. */
  error?: string;
}

/**
 * A tool run's output: a `ToolMessage` (what a tool called with a `ToolCall` returns) gives its
 * content, and its `status: 'error'` a failure; anything else is the output itself.
 */
export function toolEnd(output: unknown): ToolEnd {
  const message = record(output);
  const isToolMessage =
    message !== undefined && 'content' in message && typeof message.tool_call_id === 'string';
  if (!isToolMessage) return { output: toolOutput(output) };
  const content = toolOutput(message.content);
  return message.status === 'error'
    ? { output: '', error: content || 'the tool failed' }
    : { output: content };
}

/** The `progress` (0..1) a custom event's data carries, else `undefined`. */
export function progressOf(data: unknown): number | undefined {
  const progress = record(data)?.progress;
  return typeof progress === 'number' && progress >= 0 && progress <= 1 ? progress : undefined;
}

/** Event types that are tooltrace's own: a custom event named like one is renamed. */
const OWN_TYPES = /^(?:tool\.|llm\.|agent\.|subagent\.|io\.|core\.|before:)/;

/**
 * The bus event type of a custom event: its own name, unless that is empty or one of
 * tooltrace's own event types (`tool.result`, `llm.request`, …), which would be read as that
 * event; those become `langchain.{name}`.
 */
export function customEventType(name: unknown): string {
  if (typeof name !== 'string' || name === '') return 'langchain.custom_event';
  return OWN_TYPES.test(name) ? `langchain.${name}` : name;
}
