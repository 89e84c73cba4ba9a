import type { ToolAttributes } from '../events/index.js';

/**
 * What one event of a streaming tool says: `progress` (status, maybe a fraction done),
 * `partial` (incremental output a consumer can render), `complete` (the final output) or
 * `error` (a terminal failure). `complete` and `error` are terminal: nothing after them counts.
 */
export type ToolEventKind = 'progress' | 'partial' | 'complete' | 'error';

/**
 * One event a streaming tool yields. Only `kind` is required: `bridge` numbers events whose
 * `sequence` is unset 1, 2, 3… per call, and treats a `progress` event without `progress` as
 * "fraction unknown" (-1).
 */
export interface ToolEvent {
  kind: ToolEventKind;
  /** Monotonic per call, from 1. Leave it unset and bridge numbers the events. */
  sequence?: number;
  /** Data for consumers: a progress note, a chunk of output, or the final output. */
  payload?: unknown;
  /** Fraction done, 0..1, or -1 when unknown. Meaningful on `progress` events. */
  progress?: number;
  /** Why the call failed; set on `error` events. */
  error?: Error;
  /**
   * A low-cardinality name for the kind of failure, on `error` events: the result's `errorType`,
   * which the tracer records as the span's `error.type` (`_OTHER` without it).
   */
  errorType?: string;
  /**
   * Span attributes the call adds, on any event: bridge gathers them (a later value for a key
   * wins) and carries them on the call's `tool.result`, cancelled or failed ones included; the
   * tracer puts them on the call's span. On a `progress` or `partial` event they are also that
   * event's own: its `tool.stream.*` payload carries them, and the tracer puts them on its span
   * event (and log record), whatever the content capture (they are not content: keep payload
   * text out of them). A value that is not a string, a finite number, a boolean or an array of
   * one of those is reported as `core.error` and left out.
   */
  attributes?: ToolAttributes;
}

/**
 * Whether `value` is a valid {@link ToolEvent.progress}: a fraction from 0 to 1, or -1 when the
 * fraction is unknown. The one rule both `bridge` (for yielded events) and `ToolChannel` (for
 * pushed ones) apply.
 */
export function isProgressFraction(value: unknown): value is number {
  return typeof value === 'number' && ((value >= 0 && value <= 1) || value === -1);
}
