/** The kind of a stream event: `tool.stream.progress` or `tool.stream.partial`. */
export type StreamKind = 0 | 1;
/** A `tool.stream.progress` event. */
export const PROGRESS: StreamKind = 0;
/** A `tool.stream.partial` event. */
export const PARTIAL: StreamKind = 1;

/** One stream event the sampler may still turn into a span event. */
export class StreamMark {
  kind: StreamKind = PARTIAL;
  timeUnixNano = 0n;
  sequence = 0;
  /** Payload bytes of a partial, progress of a progress event. */
  value = 0;
  /** The payload, kept only with content capture. */
  payload: unknown = undefined;
  /** The event's own attributes (`attributes` of its payload), as they came; usually none. */
  attributes: unknown = undefined;
}

/**
 * Picks which stream events become span events, in bounded memory and without randomness (a
 * replay must give the same span).
 *
 * A span keeps at most `maxStreamEvents` events: the first quarter as they arrived (the head),
 * a spread over the middle, and always the last one. Every event past the head takes the `last`
 * slot; the one it displaces is a middle candidate. The middle keeps every `stride`-th candidate;
 * when it is full it drops every other entry it holds and doubles the stride, so whatever the
 * stream's length the kept events stay evenly spaced across it (10,000 partials with the default
 * 64: the first 16, 24 to 47 evenly spaced, the last). Memory is at most `maxStreamEvents` small
 * marks; a rejected candidate's mark is reused for the next event.
 *
 * Nothing is added to the span while the call runs: the marks are turned into span events, in
 * arrival order, when it ends. A mark is a fraction of an SDK span event (no attribute objects,
 * no copies), and adding them all at once in a tight loop is cheaper than one by one between
 * the tool's awaits. Since the SDK never holds more than `maxStreamEvents` (+1 exception) events
 * per span, it never has to drop any.
 */
export class StreamSampler {
  readonly #headSize: number;
  readonly #middleCapacity: number;
  readonly #head: StreamMark[] = [];
  readonly #middle: StreamMark[] = [];
  #last: StreamMark | undefined;
  readonly #keepLast: boolean;
  #stride = 1;
  #candidates = 0;

  constructor(headSize: number, middleCapacity: number, keepLast: boolean) {
    this.#headSize = headSize;
    this.#middleCapacity = keepLast ? middleCapacity : 0;
    this.#keepLast = keepLast;
  }

  /** Offers the next stream event. */
  offer(
    kind: StreamKind,
    timeUnixNano: bigint,
    sequence: number,
    value: number,
    payload: unknown,
    attributes?: unknown,
  ): void {
    let mark: StreamMark;
    if (this.#head.length < this.#headSize) {
      mark = new StreamMark();
      fill(mark, kind, timeUnixNano, sequence, value, payload, attributes);
      this.#head.push(mark);
      return;
    }
    if (!this.#keepLast) return;
    const previous = this.#last;
    if (previous === undefined) {
      mark = new StreamMark();
    } else if (this.#admit()) {
      this.#middle.push(previous);
      mark = new StreamMark();
    } else {
      mark = previous;
    }
    fill(mark, kind, timeUnixNano, sequence, value, payload, attributes);
    this.#last = mark;
  }

  /** How many marks are kept. */
  get size(): number {
    return this.#head.length + this.#middle.length + (this.#last === undefined ? 0 : 1);
  }

  /**
   * The kept marks in arrival order: the head, the middle, then the last. Asked for once, when
   * the stream is over: when the head holds every kept mark (a short stream), the array is the
   * sampler's own rather than a copy.
   */
  marks(): StreamMark[] {
    if (this.#middle.length === 0 && this.#last === undefined) return this.#head;
    const marks = this.#head.concat(this.#middle);
    if (this.#last !== undefined) marks.push(this.#last);
    return marks;
  }

  #admit(): boolean {
    const index = this.#candidates;
    this.#candidates += 1;
    if (this.#middleCapacity === 0 || index % this.#stride !== 0) return false;
    if (this.#middle.length >= this.#middleCapacity) {
      // Keep positions 0, 2, 4, …: candidates 0, 2·stride, 4·stride, … — still evenly spaced.
      let kept = 0;
      for (let position = 0; position < this.#middle.length; position += 2) {
        const mark = this.#middle[position];
        if (mark !== undefined) this.#middle[kept++] = mark;
      }
      this.#middle.length = kept;
      this.#stride *= 2;
      if (index % this.#stride !== 0) return false;
    }
    return true;
  }
}

function fill(
  mark: StreamMark,
  kind: StreamKind,
  timeUnixNano: bigint,
  sequence: number,
  value: number,
  payload: unknown,
  attributes: unknown,
): void {
  mark.kind = kind;
  mark.timeUnixNano = timeUnixNano;
  mark.sequence = sequence;
  mark.value = value;
  mark.payload = payload;
  mark.attributes = attributes;
}
