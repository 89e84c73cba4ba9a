import type { EventBus, ScopeRunner } from '../bus/index.js';
import { describeTool, toolScopeOf } from './tool-scopes.js';
import { isPromiseLike } from '../streamtool/is-promise-like.js';

/** What a LangChain tool's `_call` is given: the run manager names the run. */
type Call = (this: unknown, input: unknown, runManager?: unknown, config?: unknown) => unknown;

/**
 * Returns the same LangChain tools (`tool(…)`, `DynamicStructuredTool`, `StructuredTool`
 * subclasses), each one's code made to run inside the `execute_tool` span that a
 * `TooltraceCallbackHandler` on `bus` opened for its run: its HTTP calls and its own spans
 * then nest under the call's span, and what it emits on the bus is caused by the call. A
 * callback cannot do this itself (LangChain runs the tool after the callback returned, in its
 * own context), so use both, the handler for the spans and this for the nesting; it emits
 * nothing, so each call still has one span. Without the handler, or for a run the handler does
 * not follow, the tool runs as it would unwrapped.
 *
 * Each tool is a new object whose prototype is the tool given (nothing of the given one is
 * changed); its name, schema and description are the same. Entries that are not tools with code
 * (`{ name, description, schema }` definitions, runnables made tools) are kept as they are.
 */
export function traceLangChainTools<TOOLS extends readonly unknown[]>(
  tools: TOOLS,
  bus: EventBus,
): TOOLS {
  if (!Array.isArray(tools)) throw new TypeError('tools must be an array of LangChain tools');
  if (bus === null || typeof bus !== 'object' || typeof bus.emitVetoable !== 'function') {
    throw new TypeError('bus must be an EventBus');
  }
  return tools.map((tool: unknown) => traceTool(tool, bus)) as unknown as TOOLS;
}

function traceTool(tool: unknown, bus: EventBus): unknown {
  if (tool === null || typeof tool !== 'object') return tool;
  const call = (tool as { _call?: unknown })._call;
  if (typeof call !== 'function') return tool;
  const { name, description } = tool as { name?: unknown; description?: unknown };
  if (typeof name === 'string' && typeof description === 'string' && description !== '') {
    describeTool(bus, name, description);
  }
  const traced = Object.create(tool) as { _call: Call };
  const original = call as Call;
  traced._call = function tracedCall(input, runManager, config) {
    const runId = (runManager as { runId?: unknown } | undefined)?.runId;
    const runner = typeof runId === 'string' ? toolScopeOf(bus, runId) : undefined;
    if (runner === undefined) return original.call(this, input, runManager, config);
    const output = runner(() => original.call(this, input, runManager, config));
    return isPromiseLike(output)
      ? Promise.resolve(output).then((value) => inScope(value, runner))
      : inScope(output, runner);
  };
  return traced;
}

/**
 * A generator tool's generator, advanced inside the tool's scope: LangChain iterates it after
 * `_call` returned, from its own code, and a generator's body runs where `next()` is called. A
 * plain async iterator that hands on the generator's own steps, not an async generator around
 * it: that added its own awaits and yields to every chunk (three promises more per chunk).
 */
function inScope(value: unknown, runner: ScopeRunner): unknown {
  if (!isAsyncGenerator(value)) return value;
  const generator = value;
  let ended = false;
  const advance = (sent: unknown): Promise<IteratorResult<unknown, unknown>> =>
    generator.next(sent);
  const close = (): Promise<IteratorResult<unknown, unknown>> => generator.return(undefined);
  const onStep = (step: IteratorResult<unknown, unknown>): IteratorResult<unknown, unknown> => {
    if (step.done === true) ended = true;
    return step;
  };
  const onError = async (error: unknown): Promise<never> => {
    ended = true;
    await runner(close);
    throw error;
  };
  const scoped: AsyncGenerator<unknown, unknown, unknown> = {
    next(sent?: unknown): Promise<IteratorResult<unknown, unknown>> {
      if (ended) return Promise.resolve({ done: true, value: undefined });
      return runner(advance, sent).then(onStep, onError);
    },
    async return(returned?: unknown): Promise<IteratorResult<unknown, unknown>> {
      if (!ended) {
        ended = true;
        await runner(close);
      }
      return { done: true, value: returned };
    },
    async throw(error?: unknown): Promise<IteratorResult<unknown, unknown>> {
      if (!ended) {
        ended = true;
        await runner(close);
      }
      throw error;
    },
    [Symbol.asyncIterator](): AsyncGenerator<unknown, unknown, unknown> {
      return scoped;
    },
  };
  return scoped;
}

function isAsyncGenerator(value: unknown): value is AsyncGenerator<unknown, unknown, unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { next?: unknown }).next === 'function' &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
