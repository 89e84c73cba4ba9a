import { randomBytes } from 'node:crypto';
import type { EventBus } from '../bus/index.js';
import { captureContext } from '../bus/dispatch-context.js';
import type { ToolCall } from '../events/index.js';
import { runAsInvokeHandler } from '../streamtool/run-as-invoke-handler.js';
import { TracedExecution } from './traced-execution.js';
import { isPromiseLike } from '../streamtool/is-promise-like.js';

/** What the AI SDK passes a tool's `execute` that tooltrace reads (`ai` 6 and 7 alike). */
export interface AiSdkToolCallOptions {
  /** The id of the tool call; becomes the bus call id (`gen_ai.tool.call.id`). */
  toolCallId: string;
  /** Aborts the call; the call's `tool.result` is then marked cancelled. */
  abortSignal?: AbortSignal;
}

/** Options for {@link traceAiSdkTools}. */
export interface TraceAiSdkToolsOptions {
  /**
   * `source` of every event a call emits.
   * @default 'ai-sdk'
   */
  source?: string;
}

type Execute = (this: unknown, input: unknown, options: AiSdkToolCallOptions) => unknown;

/**
 * Returns the same AI SDK tool set with each tool's `execute` wrapped so each execution is
 * emitted on `bus`: `tool.invoke` (the AI SDK's `toolCallId` as the call id, the input as the
 * arguments, the tool's description), each preliminary result of a generator tool (an
 * `execute` returning an async iterable) as `tool.stream.partial`, the final output as
 * `tool.result`, a throw as a failed result (`error.type` the error's name; the error is
 * rethrown), an abort of `abortSignal` as a cancelled one. The AI SDK receives exactly what the
 * tool produced: the same values, promises resolved to the same objects, in the same order. The
 * tool's code runs as a handler of its `tool.invoke`, so with `traceToolCalls` on the bus it
 * runs inside its `execute_tool` span (generators included) and its own spans nest under it.
 * Tools without `execute` are kept as they are. Works with `ai` 6 and 7: it reads only
 * `execute`, `description`, `toolCallId` and `abortSignal`.
 */
export function traceAiSdkTools<TOOLS extends Record<string, unknown>>(
  tools: TOOLS,
  bus: EventBus,
  options: TraceAiSdkToolsOptions = {},
): TOOLS {
  if (tools === null || typeof tools !== 'object') {
    throw new TypeError('tools must be an AI SDK tool set (an object of tools)');
  }
  if (bus === null || typeof bus !== 'object' || typeof bus.emitVetoable !== 'function') {
    throw new TypeError('bus must be an EventBus');
  }
  const source = options.source ?? 'ai-sdk';
  const traced: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = (tool as { execute?: unknown } | null)?.execute;
    traced[name] =
      typeof execute === 'function'
        ? { ...tool!, execute: traceExecute(bus, source, name, tool!, execute as Execute) }
        : tool;
  }
  return traced as TOOLS;
}

function traceExecute(
  bus: EventBus,
  source: string,
  name: string,
  tool: object,
  execute: Execute,
): Execute {
  const description = (tool as { description?: unknown }).description;
  return function traced(input: unknown, callOptions: AiSdkToolCallOptions): unknown {
    const toolCallId = callOptions?.toolCallId;
    const call: ToolCall = {
      id:
        typeof toolCallId === 'string' && toolCallId !== ''
          ? toolCallId
          : `ai_${randomBytes(8).toString('hex')}`,
      name,
      arguments: isRecord(input) ? input : { input },
    };
    if (typeof description === 'string' && description !== '') call.description = description;
    return runAsInvokeHandler(bus, call, source, () => {
      const execution = new TracedExecution(bus, call, source, callOptions?.abortSignal);
      let output: unknown;
      try {
        output = execute.call(tool, input, callOptions);
      } catch (error) {
        execution.fail(error);
        throw error;
      }
      if (isAsyncIterable(output)) return relay(execution, output);
      if (isPromiseLike(output)) {
        return Promise.resolve(output).then(
          (value) => {
            execution.complete(value);
            return value;
          },
          (error: unknown) => {
            execution.fail(error);
            throw error;
          },
        );
      }
      execution.complete(output);
      return output;
    });
  };
}

/**
 * A generator tool's values, passed on one by one as the AI SDK asks for them, each emitted as a
 * partial first. The source is advanced in the context of the invoke's handler (captured here),
 * not in the AI SDK's, so the tool's code between yields runs inside its span. A plain async
 * iterator, not an async generator: a generator around the source would add its own awaits to
 * every value (about a fifth of what tracing a preliminary result cost). The AI SDK gets the
 * source's own promise for each step; the partial is emitted by a reaction registered on that
 * promise before the AI SDK's own, so it still comes first, without a promise in between that
 * would cost the AI SDK a turn of the microtask queue per value.
 */
function relay(
  execution: TracedExecution,
  output: AsyncIterable<unknown>,
): AsyncIterableIterator<unknown> {
  const iterator = output[Symbol.asyncIterator]();
  const inHandler = captureContext();
  const next = (): Promise<IteratorResult<unknown>> => iterator.next();
  const close = (): unknown => iterator.return?.();
  let last: unknown;
  let ended = false;
  const onStep = (step: IteratorResult<unknown>): void => {
    if (ended) return;
    if (step.done === true) {
      ended = true;
      // The AI SDK's final output of a generator tool is its last value.
      execution.complete(last);
      return;
    }
    last = step.value;
    execution.partial(last);
  };
  const onError = (error: unknown): void => {
    if (ended) return;
    ended = true;
    execution.fail(error);
  };
  return {
    next(): Promise<IteratorResult<unknown>> {
      if (ended) return Promise.resolve({ done: true, value: undefined });
      let step: Promise<IteratorResult<unknown>>;
      try {
        step = Promise.resolve(inHandler(next));
      } catch (error) {
        ended = true;
        execution.fail(error);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the source's own error, passed on as it is
        return Promise.reject(error);
      }
      // Registered first, so it runs before the AI SDK's reaction to the same step.
      step.then(onStep, onError);
      return step;
    },
    async return(value?: unknown): Promise<IteratorResult<unknown>> {
      if (!ended) {
        ended = true;
        execution.stopped();
        await inHandler(close);
      }
      return { done: true, value };
    },
    [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
      return this;
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
