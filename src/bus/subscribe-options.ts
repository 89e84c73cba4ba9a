import type { BusEvent } from './bus-event.js';

/** A subscriber. It may return a promise; the bus tracks it for `EventBus.drain`. */
export type EventHandler<T = unknown> = (event: BusEvent<T>) => void | PromiseLike<void>;

/** Options for `EventBus.subscribe` and `EventBus.subscribeAll`. */
export interface SubscribeOptions<T = unknown> {
  /**
   * Lower runs first; handlers of equal priority run in subscription order.
   * @default 0
   */
  priority?: number;
  /** Only events for which this returns true reach the handler. */
  filter?: (event: BusEvent<T>) => boolean;
  /** Name of the subscribing component, reported in `core.error` when its handler fails. */
  source?: string;
  /** Aborting it unsubscribes the handler. An already aborted signal subscribes nothing. */
  signal?: AbortSignal;
}
