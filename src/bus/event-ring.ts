/**
 * A fixed-size ring of the most recent items; the oldest is overwritten when it is full.
 */
export class EventRing<T> {
  readonly #items: (T | undefined)[];
  #next = 0;
  #size = 0;

  constructor(capacity: number) {
    this.#items = new Array<T | undefined>(capacity);
  }

  /** How many items the ring holds at most. */
  get capacity(): number {
    return this.#items.length;
  }

  push(item: T): void {
    if (this.#items.length === 0) return;
    this.#items[this.#next] = item;
    this.#next = (this.#next + 1) % this.#items.length;
    if (this.#size < this.#items.length) this.#size += 1;
  }

  /** The items from oldest to newest. */
  toArray(): T[] {
    const result: T[] = [];
    const start = (this.#next - this.#size + this.#items.length) % (this.#items.length || 1);
    for (let index = 0; index < this.#size; index += 1) {
      result.push(this.#items[(start + index) % this.#items.length] as T);
    }
    return result;
  }
}
