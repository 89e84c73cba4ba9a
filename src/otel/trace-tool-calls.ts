import type { EventBus } from '../bus/index.js';
import { resolveOptions, type ResolvedOptions, type TraceToolCallsOptions } from './options.js';
import { TracingSubscriber } from './tracing-subscriber.js';
import type { ToolCallTracingStats } from './tracing-stats.js';

/** A running {@link traceToolCalls} subscriber. */
export interface ToolCallTracing {
  /** Open spans, spans ended by reason, stream events coalesced, failures swallowed, … */
  stats(): ToolCallTracingStats;
  /** Flushes the tracer provider (when it has `forceFlush`); open spans stay open. */
  forceFlush(): Promise<void>;
  /**
   * Stops listening, starts spans for events still held for their invoke, ends every open span
   * marked `tooltrace.end_reason=shutdown`, then flushes the provider. Safe to call twice; the
   * provider itself is left running (it belongs to the application).
   */
  shutdown(): Promise<void>;
}

/**
 * Traces the tool calls on `bus` with OpenTelemetry: each `tool.invoke` starts a span
 * `execute_tool {tool name}` (kind INTERNAL, GenAI semantic-convention attributes, start time =
 * the event's nanosecond timestamp); `tool.stream.progress` and `tool.stream.partial` become
 * span events (at most `maxStreamEvents`, the rest summarized on the span); `tool.result` ends
 * the span with status OK or ERROR. A span's parent is the span of the nearest causal ancestor
 * (walking `causation.parentId` through events that have no span), else the OpenTelemetry
 * context active at dispatch, else a new trace grouped per `traceBy`. Calls never stay open:
 * idle, evicted and shutdown calls are ended and marked. The subscriber never throws into the
 * bus: failures are counted in `stats().errors` and reported once via `diag`. Events replayed
 * from another process (a journal, the wire) are traced with `traceReplay` instead.
 */
export function traceToolCalls(
  bus: EventBus,
  options: TraceToolCallsOptions = {},
): ToolCallTracing {
  return startTracing(bus, resolveOptions(options, 'traceToolCalls'), 'traceToolCalls');
}

/**
 * Subscribes a tracer with resolved options to `bus`: what `traceToolCalls` and `traceReplay`
 * share. Internal to otel.
 */
export function startTracing(
  bus: EventBus,
  options: ResolvedOptions,
  caller: 'traceToolCalls' | 'traceReplay',
): ToolCallTracing {
  if (bus === null || typeof bus !== 'object' || typeof bus.subscribeAll !== 'function') {
    throw new TypeError(`${caller} needs an EventBus as its first argument`);
  }
  const tracer = new TracingSubscriber(bus, options);
  let shutdown: Promise<void> | undefined;
  return {
    stats: () => tracer.stats(),
    forceFlush: () => tracer.forceFlush(),
    shutdown: () => {
      shutdown ??= Promise.resolve().then(() => {
        tracer.close();
        return tracer.forceFlush();
      });
      return shutdown;
    },
  };
}
