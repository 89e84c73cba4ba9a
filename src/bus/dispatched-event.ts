import type { BusEvent, Causation } from './bus-event.js';
import { dateFromUnixNano } from './clock.js';
import { newEventId } from './event-id.js';

/**
 * The event object the bus dispatches. A class rather than an object literal so that two fields
 * are worked out on first read, each cached then (assigning one replaces it): `timestamp` from
 * `timeUnixNano` (building a `Date` for every event was a fifth of an emit's cost, while
 * subscribers, the OpenTelemetry one first, read the nanosecond time instead), and a random `id`
 * when the emit gave none (most stream events are never asked for theirs: the tracer finds their
 * call by their parent's id; drawing and hex-encoding one was about a tenth of what tracing a
 * stream event cost). Both are accessors: spreading an event (`{ ...event }`) copies neither.
 */
export class DispatchedEvent<T> implements BusEvent<T> {
  type: string;
  timeUnixNano: bigint;
  source: string | undefined;
  payload: T;
  causation: Causation;
  #id: string | undefined;
  #timestamp: Date | undefined;

  constructor(
    type: string,
    id: string | undefined,
    timeUnixNano: bigint,
    timestamp: Date | undefined,
    source: string | undefined,
    payload: T,
    causation: Causation,
  ) {
    this.type = type;
    this.#id = id;
    this.timeUnixNano = timeUnixNano;
    this.source = source;
    this.payload = payload;
    this.causation = causation;
    this.#timestamp = timestamp;
  }

  /** The event's id: the one given, else a random one drawn on first read (see `newEventId`). */
  get id(): string {
    return (this.#id ??= newEventId());
  }

  set id(value: string) {
    this.#id = value;
  }

  /** Wall-clock time of the event, millisecond precision, from `timeUnixNano`. */
  get timestamp(): Date {
    return (this.#timestamp ??= dateFromUnixNano(this.timeUnixNano));
  }

  set timestamp(value: Date) {
    this.#timestamp = value;
  }
}
