import type { Attributes, Span, SpanContext } from '@opentelemetry/api';

/** Something other bus events can be recorded on: an open tool call or agent span. */
export interface BusEventTarget {
  readonly spanContext: SpanContext;
  /**
   * Adds a span event for another bus event (a `plan.update`, an `io.output`), unless `max` are
   * kept already; `false` when it was only counted.
   */
  addBusEvent(name: string, attributes: Attributes, unixNano: bigint, max: number): boolean;
}

/**
 * An open span of either kind (a tool call, an agent span) as the span core sees it: found by
 * the event that started it, placed under a parent, ended once. The span keeps its own state;
 * the core's end path ({@link SpanCore.end}) is the one place that ends it.
 */
export interface TrackedSpan extends BusEventTarget {
  readonly span: Span;
  /** Id of the event that started the span, `''` when it has none: what causal walks find. */
  readonly startEventId: string;
  /** Span id of its parent span, `''` for a root. */
  readonly parentSpanId: string;
  /** Whether the span has ended. */
  readonly ended: boolean;
  /**
   * Marks the span ended and returns `true`, the first time only: whoever gets `true` runs the
   * end path, so a span is ended, and taken out of every index, exactly once.
   */
  claimEnd(): boolean;
}

/**
 * A span that holds other spans' work (a turn, a sub-agent, a session root): it counts as active
 * while a child starts or ends, and is not ended for being idle while a child is still open.
 */
export interface ContainerSpan extends TrackedSpan {
  /** A child started at `unixNano` (subscriber clock `now`). */
  childStarted(unixNano: bigint, now: number): void;
  /** A child ended at `unixNano` (subscriber clock `now`). */
  childEnded(unixNano: bigint, now: number): void;
  /** Whether a child started under it is still open. */
  readonly hasOpenChildren: boolean;
}
