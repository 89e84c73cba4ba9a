import type { BusEvent, Causation, EventBus } from '../bus/index.js';
import { emitAnswered } from '../bus/event-bus.js';
import { TOOL_INVOKE, type ToolCall } from '../events/index.js';
import { claimCall } from './tool-answerers.js';

/**
 * Emits `tool.invoke` for `call` and runs `run` as one of its handlers, the way a
 * `StreamingToolPlugin` runs a tool: after the subscribers that come first (the tracer, which
 * starts the call's span and makes it active around every later handler), so what `run` starts,
 * now or later from a promise, is a child of the invoke on the bus and runs inside the span.
 * Returns what `run` returned; rethrows what it threw (the bus would only report it). Internal:
 * the adapters (`mcp`, `ai-sdk`, `langchain`) answer their own calls with it; `causation` is for
 * an adapter that knows the invoke's causal parent itself (a LangChain run's parent run).
 */
export function runAsInvokeHandler<R>(
  bus: EventBus,
  call: ToolCall,
  source: string,
  run: (event: BusEvent<ToolCall>) => R,
  causation?: Partial<Causation>,
): R {
  // Answered here: no plugin's absence makes it an unknown tool.
  const release = claimCall(bus, call);
  let outcome: ReturnType<typeof emitAnswered<ToolCall, R>>;
  try {
    outcome = emitAnswered(
      bus,
      TOOL_INVOKE,
      call,
      causation === undefined ? { source } : { source, causation },
      run,
    );
  } finally {
    release();
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.value as R;
}
