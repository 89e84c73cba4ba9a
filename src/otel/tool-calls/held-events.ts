import type { Context } from '@opentelemetry/api';
import type { BusEvent } from '../../bus/index.js';

/** Stream events and a result that wait for their `tool.invoke`. */
export interface HeldCall {
  /** The key they are held under: the invoke event id they point at, or the call key. */
  readonly key: string;
  readonly events: BusEvent[];
  /** Their payloads' bytes (estimated). */
  bytes: number;
  /** Subscriber clock (ms) when the first one arrived. */
  readonly since: number;
  /** The OpenTelemetry context active when the first one was dispatched. */
  readonly context: Context;
}

/**
 * The reorder buffer: events that arrived before their `tool.invoke` (a sidecar reading
 * interleaved sources, for instance) wait here for a short window. Bounded per call and in
 * number of calls and in payload bytes; the subscriber promotes a call that outgrows it (starts its span without the
 * invoke) instead of dropping anything.
 */
export class HeldEvents {
  readonly #calls = new Map<string, HeldCall>();
  #eventCount = 0;
  #bytes = 0;

  /** Holds `event` (its payload `bytes` large) under `key`; returns the call it joined. */
  hold(key: string, event: BusEvent, bytes: number, now: number, context: Context): HeldCall {
    let held = this.#calls.get(key);
    if (held === undefined) {
      held = { key, events: [], bytes: 0, since: now, context };
      this.#calls.set(key, held);
    }
    held.events.push(event);
    held.bytes += bytes;
    this.#eventCount += 1;
    this.#bytes += bytes;
    return held;
  }

  /** Removes and returns what is held under `key`. */
  take(key: string): HeldCall | undefined {
    if (key === '') return undefined;
    const held = this.#calls.get(key);
    if (held === undefined) return undefined;
    this.#calls.delete(key);
    this.#eventCount -= held.events.length;
    this.#bytes -= held.bytes;
    return held;
  }

  /** Removes and returns the calls held since `deadline` or earlier, oldest first. */
  takeExpired(deadline: number): HeldCall[] {
    const expired: HeldCall[] = [];
    for (const held of this.#calls.values()) {
      // Insertion order is arrival order, so the first one still in its window ends the scan.
      if (held.since > deadline) break;
      expired.push(held);
    }
    for (const held of expired) this.take(held.key);
    return expired;
  }

  /** Removes and returns the oldest held call. */
  takeOldest(): HeldCall | undefined {
    const first = this.#calls.keys().next();
    return first.done === true ? undefined : this.take(first.value);
  }

  /** Removes and returns everything. */
  takeAll(): HeldCall[] {
    const all = [...this.#calls.values()];
    this.#calls.clear();
    this.#eventCount = 0;
    this.#bytes = 0;
    return all;
  }

  /** How many calls are held. */
  get callCount(): number {
    return this.#calls.size;
  }

  /** The payload bytes held (estimated). */
  get bytes(): number {
    return this.#bytes;
  }

  /** How many events are held. */
  get eventCount(): number {
    return this.#eventCount;
  }
}
