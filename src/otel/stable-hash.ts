const encoder = new TextEncoder();

/**
 * A scratch buffer that always starts with the UTF-8 of a fixed prefix: the text to hash is
 * encoded right after it, so hashing `prefix + text` needs neither a concatenated string nor a
 * copy of the prefix. Hashing bytes rather than `charCodeAt` of the string matters for speed:
 * keys are built by concatenation, and `charCodeAt` on a concatenated (cons) string takes a slow
 * path per call — 1–2 µs per id, against about 0.1 µs this way.
 */
class PrefixedScratch {
  readonly #prefix: Uint8Array;
  #bytes: Uint8Array;
  /** The part of `#bytes` after the prefix, where `encodeInto` writes without allocating. */
  #tail: Uint8Array;

  constructor(prefix: string) {
    this.#prefix = encoder.encode(prefix);
    this.#bytes = this.#tail = this.#prefix;
    this.#grow(256);
  }

  /** The buffer the last {@link PrefixedScratch.encode} filled. */
  get bytes(): Uint8Array {
    return this.#bytes;
  }

  /** Writes `text`'s UTF-8 after the prefix; returns how many bytes the two make. */
  encode(text: string): number {
    if (text.length * 3 > this.#tail.length) this.#grow(this.#prefix.length + text.length * 3);
    return this.#prefix.length + encoder.encodeInto(text, this.#tail).written;
  }

  #grow(size: number): void {
    this.#bytes = new Uint8Array(size);
    this.#bytes.set(this.#prefix);
    this.#tail = this.#bytes.subarray(this.#prefix.length);
  }
}

/**
 * MurmurHash3 (x86, 32-bit) of `text`'s UTF-8 bytes with `seed`. Not cryptographic: it spreads
 * event ids and call ids into trace and span ids that are the same on every run and machine.
 */
export function murmur3(text: string, seed: number): number {
  const length = unprefixed.encode(text);
  murmur3Words(unprefixed.bytes, length, [seed], words);
  return words[0]!;
}

/** One block of input mixed as MurmurHash3 mixes it; the same for every seed. */
function mixBlock(block: number): number {
  block = Math.imul(block, 0xcc9e2d51);
  block = (block << 15) | (block >>> 17);
  return Math.imul(block, 0x1b873593);
}

function mixHash(hash: number, block: number): number {
  hash ^= block;
  hash = (hash << 13) | (hash >>> 19);
  return (Math.imul(hash, 5) + 0xe6546b64) | 0;
}

function finish(hash: number, length: number): number {
  return fmix32(hash ^ length);
}

/** MurmurHash3's finaliser: spreads every bit of `hash` over all 32 (unsigned result). */
export function fmix32(hash: number): number {
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/**
 * MurmurHash3 (x86, 32-bit) of the first `length` bytes with each of `seeds` (at most four) into
 * `out`, in one pass: a block's mixing does not depend on the seed, so it is done once for all.
 */
function murmur3Words(
  bytes: Uint8Array,
  length: number,
  seeds: readonly number[],
  out: Uint32Array,
): void {
  const count = seeds.length;
  let hash0 = (seeds[0] ?? 0) | 0;
  let hash1 = (seeds[1] ?? 0) | 0;
  let hash2 = (seeds[2] ?? 0) | 0;
  let hash3 = (seeds[3] ?? 0) | 0;
  const blocks = length & ~3;
  for (let index = 0; index < blocks; index += 4) {
    const block = mixBlock(
      bytes[index]! |
        (bytes[index + 1]! << 8) |
        (bytes[index + 2]! << 16) |
        (bytes[index + 3]! << 24),
    );
    hash0 = mixHash(hash0, block);
    if (count === 1) continue;
    hash1 = mixHash(hash1, block);
    if (count === 2) continue;
    hash2 = mixHash(hash2, block);
    hash3 = mixHash(hash3, block);
  }
  let tail = 0;
  switch (length & 3) {
    case 3:
      tail ^= bytes[blocks + 2]! << 16;
    // falls through
    case 2:
      tail ^= bytes[blocks + 1]! << 8;
    // falls through
    case 1:
      tail ^= bytes[blocks]!;
      tail = mixBlock(tail);
      hash0 ^= tail;
      hash1 ^= tail;
      hash2 ^= tail;
      hash3 ^= tail;
  }
  out[0] = finish(hash0, length);
  if (count === 1) return;
  out[1] = finish(hash1, length);
  if (count === 2) return;
  out[2] = finish(hash2, length);
  out[3] = finish(hash3, length);
}

/** Seeds of the 32-bit words of a derived id: different primes, so the words are unrelated. */
const SEEDS_2 = [0x9e3779b1, 0x85ebca77] as const;
const SEEDS_4 = [0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f] as const;

const unprefixed = new PrefixedScratch('');
/** The words of the id being made: reused, so hashing allocates nothing but the id string. */
const words = new Uint32Array(4);

/**
 * `words` 32-bit hashes of `prefix` followed by `text` (the prefix given as a
 * {@link PrefixedScratch}) as lowercase hex, 8 characters each, never all zeros (an all-zero
 * trace or span id is invalid in OpenTelemetry).
 */
function prefixedHashHex(scratch: PrefixedScratch, text: string, count: 2 | 4): string {
  const length = scratch.encode(text);
  murmur3Words(scratch.bytes, length, count === 2 ? SEEDS_2 : SEEDS_4, words);
  if (count === 2) {
    if (words[0] === 0 && words[1] === 0) words[1] = 1;
    return hex2(words[0]!, words[1]!);
  }
  if (words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 0) words[3] = 1;
  return hex4(words[0]!, words[1]!, words[2]!, words[3]!);
}

/**
 * `words` 32-bit hashes of `text` as lowercase hex (8 characters each), never all zeros (an
 * all-zero trace or span id is invalid in OpenTelemetry). The UTF-8 is encoded once for all
 * words.
 */
export function hashHex(text: string, words: 2 | 4): string {
  return prefixedHashHex(unprefixed, text, words);
}

/**
 * Two 32-bit hashes of `text` (64 bits in all) into `out[0]` and `out[1]`, never both zero: a
 * compact fingerprint of a key, where keeping the key itself would cost its string.
 */
export function hashWords(text: string, out: Uint32Array): void {
  const length = unprefixed.encode(text);
  murmur3Words(unprefixed.bytes, length, SEEDS_2, out);
  if (out[0] === 0 && out[1] === 0) out[1] = 1;
}

/**
 * {@link hashHex} of `prefix + text`, without building that string: for ids derived from keys
 * under a fixed prefix (`span\u0000…`, `trace\u0000…`). Returns the same id as
 * `hashHex(prefix + text, words)`.
 */
export function prefixedHasher(prefix: string): (text: string, words: 2 | 4) => string {
  const scratch = new PrefixedScratch(prefix);
  return (text, count) => prefixedHashHex(scratch, text, count);
}

/** Character codes of the lowercase hex digits. */
const HEX = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0));

function digit(word: number, shift: number): number {
  return HEX[(word >>> shift) & 15]!;
}

/*
 * The hex of an id is made by one `String.fromCharCode` call: a flat string at once, where a
 * Buffer's `toString('hex')` cost as much as the hashing and pieces joined with `+` make a
 * string that has to be flattened again on its first use as a map key.
 */

function hex2(first: number, second: number): string {
  return String.fromCharCode(
    digit(first, 28),
    digit(first, 24),
    digit(first, 20),
    digit(first, 16),
    digit(first, 12),
    digit(first, 8),
    digit(first, 4),
    digit(first, 0),
    digit(second, 28),
    digit(second, 24),
    digit(second, 20),
    digit(second, 16),
    digit(second, 12),
    digit(second, 8),
    digit(second, 4),
    digit(second, 0),
  );
}

function hex4(first: number, second: number, third: number, fourth: number): string {
  return String.fromCharCode(
    digit(first, 28),
    digit(first, 24),
    digit(first, 20),
    digit(first, 16),
    digit(first, 12),
    digit(first, 8),
    digit(first, 4),
    digit(first, 0),
    digit(second, 28),
    digit(second, 24),
    digit(second, 20),
    digit(second, 16),
    digit(second, 12),
    digit(second, 8),
    digit(second, 4),
    digit(second, 0),
    digit(third, 28),
    digit(third, 24),
    digit(third, 20),
    digit(third, 16),
    digit(third, 12),
    digit(third, 8),
    digit(third, 4),
    digit(third, 0),
    digit(fourth, 28),
    digit(fourth, 24),
    digit(fourth, 20),
    digit(fourth, 16),
    digit(fourth, 12),
    digit(fourth, 8),
    digit(fourth, 4),
    digit(fourth, 0),
  );
}
