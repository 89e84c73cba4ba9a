import type { EventBus } from '../bus/index.js';
import { resolveOptions, type ReplayTracingOptions } from './options.js';
import { startTracing, type ToolCallTracing } from './trace-tool-calls.js';

/**
 * Traces events replayed onto `bus` from another process (a journal, the NDJSON wire) with the
 * same subscriber as {@link traceToolCalls}, plus the replay controls of
 * {@link ReplayTracingOptions}: ids derived from the events (a `DerivedIdGenerator`, also given
 * to the provider), so that a replay after a restart exports the same ids; which event ids are
 * stable; a parent per event; the reorder window; the memory for pairing and de-duplication;
 * a hook on every ended span. The sidecar and `tooltrace view` trace their bus with it, and so
 * does a program that embeds their pipeline.
 */
export function traceReplay(bus: EventBus, options: ReplayTracingOptions = {}): ToolCallTracing {
  return startTracing(bus, resolveOptions(options, 'traceReplay'), 'traceReplay');
}
