import type { Causation } from './bus-event.js';
import type { EventHandler } from './subscribe-options.js';

/**
 * What a subscriber can do with an event without the event object: given its type, payload, the
 * causation its emitter gave and its time, record it and return `true`, or return `false`
 * having changed nothing, and the bus builds the event and delivers it as always. Internal: the
 * tracer's path for stream events of a call it knows (a counter, a sampler slot), which costs a
 * fraction of an event's id, object and dispatch.
 */
export type QuickPath = (
  type: string,
  payload: unknown,
  causation: Partial<Causation>,
  timeUnixNano: bigint,
) => boolean;

const quickPaths = new WeakMap<EventHandler<never>, QuickPath>();

/**
 * Gives `handler` a quick path, which the bus takes for events emitted with
 * {@link emitQuiet} when `handler` is their only subscriber, no frame is needed (the handler is
 * frameless) and no ring keeps events. Any other subscriber, or a ring, and every event is built
 * and delivered: what a subscriber observes never changes. Internal.
 */
export function withQuickPath<H extends EventHandler<never>>(handler: H, quick: QuickPath): H {
  quickPaths.set(handler, quick);
  return handler;
}

/** The quick path given to `handler`, if any. */
export function quickPathOf(handler: EventHandler<never>): QuickPath | undefined {
  return quickPaths.get(handler);
}
