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
}

/**
 * Picks which stream events past the first few become span events, in bounded memory and
 * without randomness (a replay must give the same span).
 *
 * A span keeps `maxStreamEvents` events: the first quarter as they arrive (the head, added by
 * the caller straight to the open span), then a spread over the middle, and always the last
 * one. This class holds the middle and the last. Every new event takes the `last` slot; the one
 * it displaces is a middle candidate. The middle keeps every `stride`-th candidate; when it is
 * full it drops every other entry it holds and doubles the stride, so whatever the stream's
 * length, the kept events stay evenly spaced across it (10,000 partials with the default 64:
 * the first 16, 24 to 47 evenly spaced, the last). Memory is at most `middleCapacity + 1`
 * marks, and a rejected candidate's mark is reused for the next event. The held marks are added
 * to the span, in time order after the head, when the call ends.
 */
export class StreamSampler {
  readonly #middleCapacity: number;
  readonly #middle: StreamMark[] = [];
  #last: StreamMark | undefined;
  #stride = 1;
  #candidates = 0;

  constructor(middleCapacity: number) {
    this.#middleCapacity = middleCapacity;
  }

  /** Offers the next stream event. */
  offer(
    kind: StreamKind,
    timeUnixNano: bigint,
    sequence: number,
    value: number,
    payload: unknown,
  ): void {
    const previous = this.#last;
    let mark: StreamMark;
    if (previous === undefined) {
      mark = new StreamMark();
    } else if (this.#admit()) {
      this.#middle.push(previous);
      mark = new StreamMark();
    } else {
      mark = previous;
    }
    mark.kind = kind;
    mark.timeUnixNano = timeUnixNano;
    mark.sequence = sequence;
    mark.value = value;
    mark.payload = payload;
    this.#last = mark;
  }

  /** The kept marks in arrival order: the middle, then the last. */
  marks(): StreamMark[] {
    return this.#last === undefined ? this.#middle : [...this.#middle, this.#last];
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
