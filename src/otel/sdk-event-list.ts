import type { Attributes, HrTime, Span } from '@opentelemetry/api';

/** One span event as the SDK's span keeps it (`TimedEvent`, an entry of `ReadableSpan.events`). */
export interface SdkTimedEvent {
  readonly name: string;
  readonly attributes: Attributes;
  readonly time: HrTime;
  readonly droppedAttributesCount: number;
}

/** The limits of an SDK span that `addEvent` applies (its resolved `spanLimits`). */
interface SdkEventLimits {
  readonly eventCountLimit?: number;
  readonly attributePerEventCountLimit?: number;
}

/** The fields of an SDK span (`SpanImpl`) that `addEvent` works on; other spans have none. */
interface SdkEventFields {
  readonly events?: unknown;
  readonly _spanLimits?: SdkEventLimits | null;
}

/**
 * The event list of an SDK span that is to take `adding` span events of at most
 * `attributesPerEvent` attributes each, all valid numbers, when appending them there stores
 * exactly what `addEvent` would: the span records, its limits leave every event and attribute
 * in place, and the time is given as an `HrTime` (kept as it is). `undefined` otherwise (another
 * span implementation, an ended span, a limit that would drop an event or an attribute): then
 * `addEvent` applies its rules. `addEvent` copies the attributes twice (sanitizing, then
 * counting and truncating) and looks up its limits for every event; for the stream events a
 * call keeps, all known when it ends, that was most of their cost (`npm run bench:otel`).
 */
export function sdkEventList(
  span: Span,
  adding: number,
  attributesPerEvent: number,
): SdkTimedEvent[] | undefined {
  const { events, _spanLimits: limits } = span as unknown as SdkEventFields;
  if (!Array.isArray(events) || typeof limits !== 'object' || limits === null) return undefined;
  if (!span.isRecording()) return undefined;
  const { eventCountLimit, attributePerEventCountLimit } = limits;
  if (eventCountLimit !== undefined && !(events.length + adding <= eventCountLimit)) {
    return undefined;
  }
  if (
    attributePerEventCountLimit !== undefined &&
    !(attributesPerEvent <= attributePerEventCountLimit)
  ) {
    return undefined;
  }
  return events as SdkTimedEvent[];
}
