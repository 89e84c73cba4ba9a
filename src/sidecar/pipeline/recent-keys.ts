/**
 * Remembers the keys seen lately — between `maxKeys` and twice that many, in two generations —
 * to tell when one comes again. Bounded: the oldest generation is forgotten as a whole.
 */
export class RecentKeys {
  readonly #maxKeys: number;
  #current = new Set<string>();
  #previous = new Set<string>();

  constructor(maxKeys: number) {
    this.#maxKeys = maxKeys;
  }

  /** Records `key`; `true` when it was seen before (and is still remembered). */
  seenBefore(key: string): boolean {
    if (this.#current.has(key) || this.#previous.has(key)) return true;
    this.#current.add(key);
    if (this.#current.size >= this.#maxKeys) {
      this.#previous = this.#current;
      this.#current = new Set();
    }
    return false;
  }
}
