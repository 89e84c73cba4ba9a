import { randomInt } from 'node:crypto';

/**
 * Where both hashes start, drawn once per process: whoever picks the ids cannot know which ones
 * land in the same slot, so cannot make the probes long.
 */
const SEED_HIGH = randomInt(2 ** 32) | 0;
const SEED_LOW = randomInt(2 ** 32) | 0;

/**
 * Remembers the keys seen lately — between `maxKeys` and twice that many, in two generations —
 * to tell when one comes again. Bounded: the oldest generation is forgotten as a whole.
 *
 * Keys are kept as 64-bit fingerprints in open-addressed tables of plain integers, not as
 * strings in a `Set`: a sidecar asks this for every line, and a `Set` of a hundred thousand
 * fresh id strings cost it a tenth of its time (hashing, growing the table, and the garbage
 * collector walking the strings it kept alive; `bench/sidecar.bench.ts`). Two different keys
 * share a fingerprint with a chance of about one in 2^62 per pair, so among the keys remembered
 * at once a false "seen before" is not to be expected in the life of the process.
 */
export class RecentKeys {
  readonly #maxKeys: number;
  readonly #mask: number;
  /** Each slot is two 32-bit halves of a fingerprint; 0,0 marks an empty slot. */
  #current: Int32Array;
  #previous: Int32Array;
  #currentSize = 0;

  constructor(maxKeys: number) {
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
      throw new RangeError(`maxKeys must be a positive integer, got ${String(maxKeys)}`);
    }
    this.#maxKeys = maxKeys;
    // At most half full, so a probe ends within a few slots.
    let slots = 8;
    while (slots < maxKeys * 2) slots *= 2;
    this.#mask = slots - 1;
    this.#current = new Int32Array(slots * 2);
    this.#previous = new Int32Array(slots * 2);
  }

  /** Records `key`; `true` when it was seen before (and is still remembered). */
  seenBefore(key: string): boolean {
    // Two 32-bit multiplicative hashes over the UTF-16 units, seeded per process; the low bit of
    // the second is set so that no fingerprint is the empty marker.
    let high = SEED_HIGH;
    let low = SEED_LOW;
    for (let index = 0; index < key.length; index += 1) {
      const unit = key.charCodeAt(index);
      high = Math.imul(high ^ unit, 0x01000193);
      low = Math.imul(low ^ unit, 0x5bd1e995) ^ (low >>> 15);
    }
    high ^= high >>> 16;
    low = (low ^ (low >>> 13) ^ key.length) | 1;
    if (this.#has(this.#previous, high, low)) return true;
    const table = this.#current;
    const mask = this.#mask;
    let slot = high & mask;
    for (;;) {
      const at = slot * 2;
      const storedLow = table[at + 1]!;
      if (storedLow === 0) {
        table[at] = high;
        table[at + 1] = low;
        break;
      }
      if (storedLow === low && table[at] === high) return true;
      slot = (slot + 1) & mask;
    }
    this.#currentSize += 1;
    if (this.#currentSize >= this.#maxKeys) {
      const emptied = this.#previous;
      emptied.fill(0);
      this.#previous = table;
      this.#current = emptied;
      this.#currentSize = 0;
    }
    return false;
  }

  #has(table: Int32Array, high: number, low: number): boolean {
    const mask = this.#mask;
    let slot = high & mask;
    for (;;) {
      const at = slot * 2;
      const storedLow = table[at + 1]!;
      if (storedLow === 0) return false;
      if (storedLow === low && table[at] === high) return true;
      slot = (slot + 1) & mask;
    }
  }
}
