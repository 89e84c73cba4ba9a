/**
 * A bounded map that forgets in two generations: entries go into the current generation; when
 * it is full it becomes the previous one and the one before is dropped whole. Lookups see both,
 * so an entry lives for between `capacity` and `2 × capacity` insertions. Cheaper than an LRU
 * (no reordering on read, no per-insert eviction) and just as bounded.
 */
export class GenerationalMap<V> {
  readonly #capacity: number;
  #current = new Map<string, V>();
  #previous = new Map<string, V>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: string): V | undefined {
    const value = this.#current.get(key);
    return value !== undefined ? value : this.#previous.get(key);
  }

  set(key: string, value: V): void {
    if (this.#current.size >= this.#capacity && !this.#current.has(key)) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, value);
  }

  /** How many entries are held, both generations together (a key in both counts twice). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }
}
