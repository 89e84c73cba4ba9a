import { hashWords } from '../stable-hash.js';

/** Slots of a generation's table when it is first needed; it doubles as it fills. */
const INITIAL_SLOTS = 1024;
/** Bytes a slot takes: a 64-bit fingerprint as two 32-bit words. */
export const TOMBSTONE_SLOT_BYTES = 8;

/** One generation: an open-addressed set of 64-bit fingerprints, at most half full. */
class Generation {
  words: Uint32Array;
  mask: number;
  size = 0;
  /** The highest invoke sequence among the calls in it, for the watermark when it is dropped. */
  highestSequence = 0;

  constructor(slots: number) {
    this.words = new Uint32Array(slots * 2);
    this.mask = slots - 1;
  }

  get slots(): number {
    return this.mask + 1;
  }

  has(high: number, low: number): boolean {
    const words = this.words;
    for (let slot = low & this.mask; ; slot = (slot + 1) & this.mask) {
      const at = slot * 2;
      const storedLow = words[at + 1]!;
      const storedHigh = words[at]!;
      if (storedHigh === 0 && storedLow === 0) return false;
      if (storedHigh === high && storedLow === low) return true;
    }
  }

  /** Adds the fingerprint; returns whether it was new. */
  add(high: number, low: number): boolean {
    const words = this.words;
    for (let slot = low & this.mask; ; slot = (slot + 1) & this.mask) {
      const at = slot * 2;
      const storedLow = words[at + 1]!;
      const storedHigh = words[at]!;
      if (storedHigh === high && storedLow === low) return false;
      if (storedHigh === 0 && storedLow === 0) {
        words[at] = high;
        words[at + 1] = low;
        this.size += 1;
        return true;
      }
    }
  }

  grow(): void {
    const old = this.words;
    this.words = new Uint32Array(old.length * 2);
    this.mask = this.mask * 2 + 1;
    this.size = 0;
    for (let at = 0; at < old.length; at += 2) {
      if (old[at] !== 0 || old[at + 1] !== 0) this.add(old[at]!, old[at + 1]!);
    }
  }
}

/**
 * What the tracer remembers of every call it ended, compactly: a 64-bit fingerprint per key (the
 * call's invoke event id, and its call key where calls are paired by call id) in two generations
 * of at most `capacity` fingerprints each, so the last `capacity` to `2 × capacity` keys are
 * known. A generation's table is half full at most: 16 bytes a key at full size, 32 bytes a key
 * counted over both generations — against a few hundred for a remembered event — and it grows by
 * doubling, so a tracer that ends few calls holds little.
 *
 * When a generation is let go, what was in it is not forgotten into duplicates: its highest
 * invoke sequence becomes a watermark, and an event whose call is unknown but whose parent's
 * sequence is at or below the watermark is taken as late (counted, ignored) rather than as a new
 * call. A false match of two 64-bit fingerprints (about one in 10^11 at a million keys) makes a
 * new call's early event look late: it is counted, never doubled.
 */
export class CallTombstones {
  readonly #capacity: number;
  #current: Generation | undefined;
  #previous: Generation | undefined;
  #watermark = 0;
  #forgotten = 0;
  readonly #words = new Uint32Array(2);

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Remembers `key` for a call whose `tool.invoke` had bus sequence `sequence` (0: unknown). */
  add(key: string, sequence: number): void {
    if (key === '') return;
    hashWords(key, this.#words);
    const high = this.#words[0]!;
    const low = this.#words[1]!;
    if (this.#previous?.has(high, low) === true) return;
    let current = this.#current;
    if (current === undefined) {
      current = this.#current = new Generation(Math.min(INITIAL_SLOTS, this.#maxSlots()));
    } else if (current.size >= this.#capacity) {
      this.#drop();
      current = this.#current = new Generation(this.#previous!.slots);
    } else if (current.size * 2 >= current.slots && current.slots < this.#maxSlots()) {
      current.grow();
    }
    if (current.add(high, low) && sequence > current.highestSequence) {
      current.highestSequence = sequence;
    }
  }

  /** Whether a call with `key` ended and is still remembered. */
  has(key: string): boolean {
    if (key === '' || this.#current === undefined) return false;
    hashWords(key, this.#words);
    const high = this.#words[0]!;
    const low = this.#words[1]!;
    return this.#current.has(high, low) || this.#previous?.has(high, low) === true;
  }

  /**
   * Whether an event whose parent had bus sequence `parentSequence` belongs to a call older than
   * what was let go: such a call ended long ago, so the event is late, not a new call.
   */
  forgotten(parentSequence: number): boolean {
    return parentSequence > 0 && parentSequence <= this.#watermark;
  }

  /** Keys let go of with their generation (their calls are known only by the watermark). */
  get forgottenCount(): number {
    return this.#forgotten;
  }

  /** Keys remembered now. */
  get size(): number {
    return (this.#current?.size ?? 0) + (this.#previous?.size ?? 0);
  }

  /** Bytes the tables take now. */
  get bytes(): number {
    const slots = (this.#current?.slots ?? 0) + (this.#previous?.slots ?? 0);
    return slots * TOMBSTONE_SLOT_BYTES;
  }

  #maxSlots(): number {
    // The smallest power of two at least twice the capacity: a full generation is half full.
    let slots = INITIAL_SLOTS;
    while (slots < this.#capacity * 2) slots *= 2;
    return slots;
  }

  #drop(): void {
    const previous = this.#previous;
    if (previous !== undefined) {
      this.#forgotten += previous.size;
      if (previous.highestSequence > this.#watermark) this.#watermark = previous.highestSequence;
    }
    this.#previous = this.#current;
  }
}
