/** Spare buffers kept at most: as many as requests in flight by default, whose bodies come back. */
const MAX_SPARE = 2;
/** A buffer grown past this (one huge batch) is not kept for the next. */
const MAX_KEPT_BYTES = 8 * 1024 * 1024;

/**
 * The memory an encoder writes request bodies into, reused once a request was sent. A batch of
 * 512 spans is a body of one to two megabytes; copying it out of the encoder's buffer, or
 * writing each into fresh memory the kernel must first map, cost as much as a fifth of the
 * encoding. So the encoder hands out a view of its buffer as the body and takes another buffer
 * for the next; whoever sent the body gives it back ({@link give}) when nothing reads it any
 * more. A body never given back is simply collected. Only buffers this pool made are taken
 * back, each once, and at most {@link MAX_SPARE} are kept.
 */
export class RequestBuffers {
  #size: number;
  readonly #spare: Buffer[] = [];
  /** Buffers made here and handed out, not yet given back. */
  readonly #issued = new WeakSet<ArrayBufferLike>();

  /** `size` is the size of the first buffer; a buffer grown for a larger body sets the next. */
  constructor(size: number) {
    this.#size = size;
  }

  /** A buffer of at least the current size to write a body into: a spare one, or new. */
  take(): Buffer {
    return this.#spare.pop() ?? Buffer.allocUnsafeSlow(this.#size);
  }

  /**
   * A buffer of at least `needed` bytes (doubling) holding the first `used` bytes of `buffer`,
   * for a body that outgrew it; later buffers are made this large, up to the largest size kept
   * ({@link MAX_KEPT_BYTES}): one huge batch must not make every later one take that much.
   */
  grow(buffer: Buffer, used: number, needed: number): Buffer {
    let size = Math.max(buffer.length * 2, 1024);
    while (size < needed) size *= 2;
    if (size > this.#size && size <= MAX_KEPT_BYTES) this.#size = size;
    // Not from Node's shared pool: the buffer owns its memory, so a view of it can be given back.
    const grown = Buffer.allocUnsafeSlow(size);
    grown.set(buffer.subarray(0, used));
    return grown;
  }

  /** The first `length` bytes of `buffer` as a body, which the caller may {@link give} back. */
  lend(buffer: Buffer, length: number): Buffer {
    this.#issued.add(buffer.buffer);
    return buffer.subarray(0, length);
  }

  /**
   * Bytes `start` to `end` of `buffer` as a body that may be kept a while (a batch waiting to be
   * sent, or sent again): a view, which the caller may {@link give} back, when it fills at least
   * seven eighths of the buffer; else a copy of just it, and the buffer is kept for the next
   * body. Batches queued during an outage then hold at most 8/7 of their bytes: a partial batch
   * must not hold a buffer made for hundreds of spans, nor a batch just over a power of two one
   * twice its size.
   */
  lendToKeep(buffer: Buffer, start: number, end: number): Buffer {
    if ((end - start) * 8 >= buffer.length * 7) return this.lend(buffer, end).subarray(start);
    const copy = Buffer.allocUnsafeSlow(end - start);
    copy.set(buffer.subarray(start, end));
    this.reuse(buffer);
    return copy;
  }

  /** Takes back the buffer `body` is a view of, once nothing reads `body` any more. */
  give(body: Uint8Array): void {
    const memory = body.buffer;
    if (!this.#issued.delete(memory)) return;
    this.#keep(memory);
  }

  /** Takes back a buffer from {@link take} or {@link grow} that was never lent. */
  reuse(buffer: Buffer): void {
    if (buffer.byteOffset !== 0 || this.#issued.has(buffer.buffer)) return;
    this.#keep(buffer.buffer);
  }

  #keep(memory: ArrayBufferLike): void {
    const size = memory.byteLength;
    if (size < this.#size || size > MAX_KEPT_BYTES || this.#spare.length >= MAX_SPARE) return;
    this.#spare.push(Buffer.from(memory, 0, size));
  }
}
