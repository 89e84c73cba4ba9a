import type { BusEvent, Causation } from './bus-event.js';
import { dateFromUnixNano } from './clock.js';

/**
 * The event object the bus dispatches. A class rather than an object literal for one reason:
 * `timestamp` is worked out from `timeUnixNano` on first read. Building a `Date` for every
 * event was a fifth of an emit's cost, while subscribers (the OpenTelemetry one first) read the
 * nanosecond time instead. The `Date` is cached once read; assigning one replaces it.
 */
export class DispatchedEvent<T> implements BusEvent<T> {
  type: string;
  id: string;
  timeUnixNano: bigint;
  source: string | undefined;
  payload: T;
  causation: Causation;
  #timestamp: Date | undefined;
  /** The id when the bus drew it for this event (`''` when the emitter gave one). */
  readonly #drawnId: string;

  constructor(
    type: string,
    id: string,
    timeUnixNano: bigint,
    timestamp: Date | undefined,
    source: string | undefined,
    payload: T,
    causation: Causation,
    idDrawn: boolean,
  ) {
    this.type = type;
    this.id = id;
    this.timeUnixNano = timeUnixNano;
    this.source = source;
    this.payload = payload;
    this.causation = causation;
    this.#timestamp = timestamp;
    this.#drawnId = idDrawn ? id : '';
  }

  /**
   * Whether `event` has the id the bus drew for it when it was emitted (128 random bits, not
   * given by the emitter, not changed since): no event before it can have had that id, so a
   * subscriber that sees each event once knows it has not seen this one. Not a field: spreads,
   * JSON and equality checks of events see only the event's own fields.
   */
  static hasDrawnId(event: BusEvent): boolean {
    return #drawnId in event && event.#drawnId !== '' && event.#drawnId === event.id;
  }

  /** Wall-clock time of the event, millisecond precision, from `timeUnixNano`. */
  get timestamp(): Date {
    return (this.#timestamp ??= dateFromUnixNano(this.timeUnixNano));
  }

  set timestamp(value: Date) {
    this.#timestamp = value;
  }
}
