import type { EventHandler } from './subscribe-options.js';

const frameless = new WeakSet<EventHandler<never>>();

/**
 * Marks `handler` as one that needs no dispatch frame: it emits nothing on the bus and starts no
 * work that should inherit the event's causation (the tracer, which only records). When every
 * handler of an event is so marked, the bus delivers it without entering an
 * `AsyncLocalStorage` frame, the dearest part of dispatching a stream event. Internal: a
 * handler wrongly marked would give what it emits the wrong causal parent.
 */
export function markFrameless<H extends EventHandler<never>>(handler: H): H {
  frameless.add(handler);
  return handler;
}

/** Whether `handler` was marked with {@link markFrameless}. */
export function isFrameless(handler: EventHandler<never>): boolean {
  return frameless.has(handler);
}
