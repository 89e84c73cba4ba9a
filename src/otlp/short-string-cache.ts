import type { Buffer } from 'node:buffer';

const SLOTS = 4096;
const MAX_BYTES = 48;

/**
 * Decodes short UTF-8 strings through a fixed-size cache keyed by their bytes. OTLP repeats the
 * same short strings over and over (attribute keys, span and event names, tool names), and
 * comparing a few dozen bytes in JavaScript is several times cheaper than asking
 * `Buffer#toString` for a new string, which also has to be hashed again when used as a property
 * key. Each slot holds one string; a new one evicts whatever hashed to the same slot, so memory
 * stays at about `SLOTS * MAX_BYTES` bytes however many distinct strings pass through.
 */
export class ShortStringCache {
  readonly #bytes = new Uint8Array(SLOTS * MAX_BYTES);
  readonly #lengths = new Int32Array(SLOTS).fill(-1);
  readonly #strings: string[] = new Array<string>(SLOTS).fill('');

  /** The UTF-8 text of `buffer[start, end)`; strings longer than the cache holds are decoded as usual. */
  decode(buffer: Buffer, start: number, end: number): string {
    const length = end - start;
    if (length > MAX_BYTES) return buffer.toString('utf8', start, end);
    let hash = 0x811c9dc5;
    for (let position = start; position < end; position += 1) {
      hash = Math.imul(hash ^ buffer[position]!, 0x01000193);
    }
    const slot = (hash ^ (hash >>> 15)) & (SLOTS - 1);
    const cached = this.#bytes;
    const offset = slot * MAX_BYTES;
    if (this.#lengths[slot] === length) {
      let index = 0;
      while (index < length && cached[offset + index] === buffer[start + index]) index += 1;
      if (index === length) return this.#strings[slot]!;
    }
    const text = buffer.toString('utf8', start, end);
    for (let index = 0; index < length; index += 1) cached[offset + index] = buffer[start + index]!;
    this.#lengths[slot] = length;
    this.#strings[slot] = text;
    return text;
  }
}
