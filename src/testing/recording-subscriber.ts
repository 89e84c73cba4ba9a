import type { BusEvent, EventBus } from '../bus/index.js';

/** Options for {@link RecordingSubscriber}. */
export interface RecordingSubscriberOptions {
  /**
   * Most events kept; later ones are counted in {@link RecordingSubscriber.dropped}.
   * @default 1_000_000
   */
  maxEvents?: number;
  /**
   * Also record the events still in the bus's replay ring when subscribing.
   * @default false
   */
  replay?: boolean;
}

const DEFAULT_MAX_EVENTS = 1_000_000;

/**
 * A bus subscriber for tests that records every event it sees, in dispatch order, with helpers
 * to pick them out by type. It subscribes on construction through `bus.subscribeAll`, so it sees
 * events of every type, and stops with {@link RecordingSubscriber.unsubscribe}.
 */
export class RecordingSubscriber {
  readonly #events: BusEvent[] = [];
  readonly #maxEvents: number;
  readonly #unsubscribe: () => void;
  #dropped = 0;

  constructor(bus: EventBus, options: RecordingSubscriberOptions = {}) {
    this.#maxEvents = options.maxEvents ?? DEFAULT_MAX_EVENTS;
    if (!Number.isSafeInteger(this.#maxEvents) || this.#maxEvents < 0) {
      throw new TypeError(
        `maxEvents must be a non-negative integer, got ${String(options.maxEvents)}`,
      );
    }
    const record = (event: BusEvent): void => {
      if (this.#events.length < this.#maxEvents) this.#events.push(event);
      else this.#dropped += 1;
    };
    const subscribeOptions = { source: 'tooltrace.testing.recorder' };
    this.#unsubscribe =
      options.replay === true
        ? bus.subscribeAllReplay(record, subscribeOptions)
        : bus.subscribeAll(record, subscribeOptions);
  }

  /** Every recorded event, in dispatch order. */
  get events(): readonly BusEvent[] {
    return this.#events;
  }

  /** Events not recorded because `maxEvents` was reached. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The recorded events of `type`, in dispatch order. */
  ofType<T = unknown>(type: string): BusEvent<T>[] {
    return this.#events.filter((event) => event.type === type) as BusEvent<T>[];
  }

  /** The payloads of the recorded events of `type`, in dispatch order. */
  payloadsOf<T = unknown>(type: string): T[] {
    return this.ofType<T>(type).map((event) => event.payload);
  }

  /** The types of the recorded events, in dispatch order: handy for `toEqual([...])`. */
  types(): string[] {
    return this.#events.map((event) => event.type);
  }

  /** The last recorded event, of `type` when given. */
  last<T = unknown>(type?: string): BusEvent<T> | undefined {
    for (let index = this.#events.length - 1; index >= 0; index -= 1) {
      const event = this.#events[index]!;
      if (type === undefined || event.type === type) return event as BusEvent<T>;
    }
    return undefined;
  }

  /** The recorded event with id `id`. */
  byId<T = unknown>(id: string): BusEvent<T> | undefined {
    return this.#events.find((event) => event.id === id) as BusEvent<T> | undefined;
  }

  /** Forgets the recorded events and the drop count; recording goes on. */
  clear(): void {
    this.#events.length = 0;
    this.#dropped = 0;
  }

  /** Stops recording. Safe to call more than once. */
  unsubscribe(): void {
    this.#unsubscribe();
  }
}
