/**
 * Tracks which input offsets must not be passed by a checkpoint. A tool call pins the offset of
 * the earliest line it depends on when its invoke is read and unpins it once its span was
 * exported; the safe checkpoint is the lowest pinned offset, or the read offset when nothing is
 * pinned. Offsets are pinned in increasing order (lines are read front to back), so a queue with
 * lazy removal gives the minimum in amortised constant time.
 */
export class OffsetPins {
  readonly #queue: { key: string; offset: number }[] = [];
  #head = 0;
  readonly #pinned = new Map<string, number>();

  /** Pins `offset` under `key`. A key pinned twice keeps its first offset. */
  pin(key: string, offset: number): void {
    if (this.#pinned.has(key)) return;
    this.#pinned.set(key, offset);
    this.#queue.push({ key, offset });
  }

  /** Releases the pin under `key`, if any. */
  unpin(key: string): void {
    this.#pinned.delete(key);
  }

  /** How many pins are held. */
  get size(): number {
    return this.#pinned.size;
  }

  /** The lowest pinned offset, or `undefined` when nothing is pinned. */
  lowest(): number | undefined {
    while (this.#head < this.#queue.length) {
      const entry = this.#queue[this.#head]!;
      if (this.#pinned.get(entry.key) === entry.offset) return entry.offset;
      this.#head += 1;
    }
    this.#queue.length = 0;
    this.#head = 0;
    return undefined;
  }

  /** Drops every pin (a file was truncated or rotated away). */
  clear(): void {
    this.#pinned.clear();
    this.#queue.length = 0;
    this.#head = 0;
  }
}
