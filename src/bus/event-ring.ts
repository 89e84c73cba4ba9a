import type { BusEvent } from './bus-event.js';
import { DispatchedEvent } from './dispatched-event.js';
import { payloadBytes } from './payload-bytes.js';

const CHUNK_SIZE = 64;
/** Characters of an elided payload kept as its preview. */
const PREVIEW_CHARS = 256;
/** Characters of each string field of an elided object payload kept in its preview. */
const FIELD_PREVIEW_CHARS = 64;
/** What an event costs the ring besides its payload (the event object, causation, ids). */
const EVENT_OVERHEAD_BYTES = 256;

/**
 * What the replay ring holds in place of a payload larger than `ringPayloadBytes`: its size and
 * a short preview, so a replaying subscriber sees that the event happened and how large it was
 * without the ring keeping the payload alive.
 */
export interface ElidedPayload {
  readonly elided: true;
  /** The payload's size in bytes (UTF-8 length of a string, an estimate of its JSON otherwise). */
  readonly bytes: number;
  /** The first characters of the payload (a string's, or of its top-level fields'). */
  readonly preview: string;
}

/** What the ring holds and has let go of, part of `EventBus.stats()`. */
export interface EventRingStats {
  /** Events held for replay now. */
  ringEvents: number;
  /** Estimated bytes those events hold. */
  ringBytes: number;
  /** Events held by size and preview only, their payload over `ringPayloadBytes`. */
  ringElided: number;
  /** Events let go of to stay within `ringSize` and `ringBytes`. */
  ringEvicted: number;
}

interface Held {
  readonly event: BusEvent;
  readonly bytes: number;
}

/**
 * A bounded record of the most recent events, in count and in bytes: the oldest are dropped past
 * `capacity` events or `maxBytes` estimated bytes, and an event whose payload alone is over
 * `maxPayloadBytes` is held as a copy carrying an {@link ElidedPayload}. Items go into small
 * chunks that are replaced rather than one long-lived array overwritten in place: storing a new
 * object into an old array makes V8 track the pointer for the next garbage collection, and that
 * cost a sixth of an emit, while a store into a freshly allocated chunk does not.
 */
export class EventRing {
  readonly #capacity: number;
  readonly #maxBytes: number;
  readonly #maxPayloadBytes: number;
  #chunks: Held[][] = [];
  #current: Held[] = [];
  /** Index of the first live item of `#chunks[0]` (or of `#current` when there are no chunks). */
  #start = 0;
  #held = 0;
  #bytes = 0;
  #elided = 0;
  #evicted = 0;

  constructor(capacity: number, maxBytes = Number.POSITIVE_INFINITY, maxPayloadBytes = maxBytes) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
    this.#maxPayloadBytes = maxPayloadBytes;
  }

  /** How many items the ring holds at most. */
  get capacity(): number {
    return this.#capacity;
  }

  push(event: BusEvent): void {
    if (this.#capacity === 0) return;
    const payloadSize = payloadBytes(event.payload);
    let held = event;
    let bytes = EVENT_OVERHEAD_BYTES + payloadSize;
    if (payloadSize > this.#maxPayloadBytes) {
      held = elidedCopy(event, payloadSize);
      bytes = EVENT_OVERHEAD_BYTES + PREVIEW_CHARS * 2;
      this.#elided += 1;
    }
    if (this.#current.length === CHUNK_SIZE) {
      this.#chunks.push(this.#current);
      this.#current = [];
    }
    this.#current.push({ event: held, bytes });
    this.#held += 1;
    this.#bytes += bytes;
    while (this.#held > this.#capacity || (this.#bytes > this.#maxBytes && this.#held > 1)) {
      this.#dropOldest();
    }
  }

  /** The most recent items (at most `capacity`), oldest first. */
  toArray(): BusEvent[] {
    const all: BusEvent[] = [];
    let skip = this.#start;
    for (const chunk of [...this.#chunks, this.#current]) {
      for (let index = skip; index < chunk.length; index += 1) all.push(chunk[index]!.event);
      skip = 0;
    }
    return all;
  }

  stats(): EventRingStats {
    return {
      ringEvents: this.#held,
      ringBytes: this.#bytes,
      ringElided: this.#elided,
      ringEvicted: this.#evicted,
    };
  }

  #dropOldest(): void {
    const chunk = this.#chunks[0] ?? this.#current;
    const item = chunk[this.#start]!;
    this.#bytes -= item.bytes;
    this.#held -= 1;
    this.#evicted += 1;
    this.#start += 1;
    if (this.#start < chunk.length) return;
    this.#start = 0;
    // A chunk whose items all went is released whole.
    if (this.#chunks.length > 0) this.#chunks.shift();
    else this.#current = [];
  }
}

/** A copy of `event` whose payload is replaced by its size and a preview. */
function elidedCopy(event: BusEvent, bytes: number): BusEvent {
  const payload: ElidedPayload = { elided: true, bytes, preview: previewOf(event.payload) };
  const copy = new DispatchedEvent<unknown>(
    event.type,
    event.id,
    event.timeUnixNano,
    undefined,
    event.source,
    payload,
    event.causation,
    false,
  );
  return copy;
}

/**
 * A short text for a large payload, built without serializing it: a string's first characters,
 * an object's top-level fields with strings cut short and nested values named by their kind.
 */
function previewOf(payload: unknown): string {
  if (typeof payload === 'string') return payload.slice(0, PREVIEW_CHARS);
  if (payload === null || typeof payload !== 'object')
    return String(payload).slice(0, PREVIEW_CHARS);
  if (ArrayBuffer.isView(payload))
    return `[${payload.constructor.name} ${payload.byteLength} bytes]`;
  if (Array.isArray(payload)) return `[array of ${payload.length}]`;
  const parts: string[] = [];
  let length = 2;
  for (const key in payload) {
    if (!Object.hasOwn(payload, key)) continue;
    const value = (payload as Record<string, unknown>)[key];
    let text: string;
    if (typeof value === 'string') text = JSON.stringify(value.slice(0, FIELD_PREVIEW_CHARS));
    else if (value === null || typeof value !== 'object') text = String(value);
    else text = Array.isArray(value) ? `[array of ${value.length}]` : '{…}';
    const part = `${JSON.stringify(key.slice(0, FIELD_PREVIEW_CHARS))}:${text}`;
    parts.push(part);
    length += part.length + 1;
    if (length >= PREVIEW_CHARS) break;
  }
  return `{${parts.join(',')}}`.slice(0, PREVIEW_CHARS);
}
