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
 *
 * The tables start at 1,024 slots and double as keys come, up to twice `maxKeys` slots (8 bytes
 * each, per generation): a sidecar keeps one per client, and a client that sends a few lines
 * should cost a few KB.
 */
export class RecentKeys {
  readonly #maxKeys: number;
  /** Slots per table once grown to hold `maxKeys` keys at most half full. */
  readonly #fullSlots: number;
  #mask: number;
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
    this.#fullSlots = slots;
    // Small until keys come: a client that sends a few lines holds a few KB, not 2 MB.
    const initial = Math.min(slots, MIN_SLOTS);
    this.#mask = initial - 1;
    this.#current = new Int32Array(initial * 2);
    this.#previous = new Int32Array(initial * 2);
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
    if (!insert(this.#current, this.#mask, high, low)) return true;
    this.#currentSize += 1;
    if (this.#currentSize >= this.#maxKeys) {
      const emptied = this.#previous;
      emptied.fill(0);
      this.#previous = this.#current;
      this.#current = emptied;
      this.#currentSize = 0;
    } else if (this.#currentSize * 2 > this.#mask + 1 && this.#mask + 1 < this.#fullSlots) {
      this.#grow();
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

  /** Doubles both tables, placing every fingerprint anew. */
  #grow(): void {
    const slots = (this.#mask + 1) * 2;
    const mask = slots - 1;
    const regrown = (table: Int32Array): Int32Array => {
      const grown = new Int32Array(slots * 2);
      for (let at = 0; at < table.length; at += 2) {
        if (table[at + 1] !== 0) insert(grown, mask, table[at]!, table[at + 1]!);
      }
      return grown;
    };
    this.#current = regrown(this.#current);
    this.#previous = regrown(this.#previous);
    this.#mask = mask;
  }
}

/** Slots a table starts with. */
const MIN_SLOTS = 1024;

/** Puts a fingerprint in `table`; `false` when it is there already. */
function insert(table: Int32Array, mask: number, high: number, low: number): boolean {
  let slot = high & mask;
  for (;;) {
    const at = slot * 2;
    const storedLow = table[at + 1]!;
    if (storedLow === 0) {
      table[at] = high;
      table[at + 1] = low;
      return true;
    }
    if (storedLow === low && table[at] === high) return false;
    slot = (slot + 1) & mask;
  }
}
