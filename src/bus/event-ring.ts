const CHUNK_SIZE = 64;

/**
 * A bounded record of the most recent items; the oldest are dropped past `capacity`. Items go
 * into small chunks that are replaced rather than one long-lived array overwritten in place:
 * storing a new object into an old array makes V8 track the pointer for the next garbage
 * collection, and that cost a sixth of an emit, while a store into a freshly allocated chunk does
 * not.
 */
export class EventRing<T> {
  readonly #capacity: number;
  #chunks: T[][] = [];
  #current: T[] = [];
  #held = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** How many items the ring holds at most. */
  get capacity(): number {
    return this.#capacity;
  }

  push(item: T): void {
    if (this.#capacity === 0) return;
    if (this.#current.length === CHUNK_SIZE) {
      this.#chunks.push(this.#current);
      this.#current = [];
      // Drop whole chunks that only hold items past the capacity.
      while (this.#held - this.#chunks[0]!.length >= this.#capacity) {
        this.#held -= this.#chunks.shift()!.length;
      }
    }
    this.#current.push(item);
    this.#held += 1;
  }

  /** The most recent items (at most `capacity`), oldest first. */
  toArray(): T[] {
    const all = this.#chunks.flat();
    for (const item of this.#current) all.push(item);
    return all.length > this.#capacity ? all.slice(all.length - this.#capacity) : all;
  }
}
