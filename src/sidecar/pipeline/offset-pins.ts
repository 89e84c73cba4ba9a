/** One pin in the heap; stale once the key was unpinned or pinned anew. */
interface Pin {
  readonly key: object;
  readonly offset: number;
}

/** Stale heap entries tolerated beyond the live pins before the heap is rebuilt. */
const COMPACT_SLACK = 1024;

/**
 * Offsets a checkpoint must not pass, each held by a key (a span) until it is released. Pins do
 * not arrive in increasing order — a call pins the offset of the line its causal chain began at,
 * which may lie far behind lines read since — so the lowest one is kept in a binary min-heap with
 * lazy removal: `pin` and `lowest` cost O(log n), `unpin` O(1), and the heap is rebuilt from the
 * live pins when stale entries pile up behind a long-held one.
 */
export class OffsetPins {
  readonly #pinned = new Map<object, Pin>();
  #heap: Pin[] = [];

  /** Pins `offset` under `key`. A key pinned twice keeps its lower offset. */
  pin(key: object, offset: number): void {
    const current = this.#pinned.get(key);
    if (current !== undefined && current.offset <= offset) return;
    const entry = { key, offset };
    this.#pinned.set(key, entry);
    this.#push(entry);
    if (this.#heap.length > 2 * this.#pinned.size + COMPACT_SLACK) this.#rebuild();
  }

  /** Releases the pin under `key`, if any. */
  unpin(key: object): void {
    this.#pinned.delete(key);
  }

  /** How many pins are held. */
  get size(): number {
    return this.#pinned.size;
  }

  /** The lowest pinned offset, or `undefined` when nothing is pinned. */
  lowest(): number | undefined {
    const heap = this.#heap;
    while (heap.length > 0) {
      const top = heap[0]!;
      if (this.#pinned.get(top.key) === top) return top.offset;
      this.#pop();
    }
    return undefined;
  }

  #push(entry: Pin): void {
    const heap = this.#heap;
    let index = heap.length;
    heap.push(entry);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.offset <= entry.offset) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = entry;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.offset < heap[left]!.offset ? right : left;
      if (heap[child]!.offset >= last.offset) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
  }

  #rebuild(): void {
    this.#heap = [];
    for (const entry of this.#pinned.values()) this.#push(entry);
  }
}
