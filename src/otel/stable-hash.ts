const encoder = new TextEncoder();
/** Reused for every hash: `encodeInto` writes a string's UTF-8 here without allocating. */
let scratch = new Uint8Array(256);

/**
 * The UTF-8 bytes of `text` in the shared scratch buffer; returns how many there are. Hashing
 * bytes rather than `charCodeAt` of the string matters for speed: keys are built by
 * concatenation, and `charCodeAt` on a concatenated (cons) string takes a slow path per call —
 * 1–2 µs per id, against about 0.1 µs this way.
 */
function utf8Of(text: string): number {
  if (text.length * 3 > scratch.length) scratch = new Uint8Array(text.length * 3);
  return encoder.encodeInto(text, scratch).written;
}

/**
 * MurmurHash3 (x86, 32-bit) of `text`'s UTF-8 bytes with `seed`. Not cryptographic: it spreads
 * event ids and call ids into trace and span ids that are the same on every run and machine.
 */
export function murmur3(text: string, seed: number): number {
  return murmur3Bytes(scratch, utf8Of(text), seed);
}

function murmur3Bytes(bytes: Uint8Array, length: number, seed: number): number {
  let hash = seed >>> 0;
  const blocks = length & ~3;
  for (let index = 0; index < blocks; index += 4) {
    let block =
      bytes[index]! |
      (bytes[index + 1]! << 8) |
      (bytes[index + 2]! << 16) |
      (bytes[index + 3]! << 24);
    block = Math.imul(block, 0xcc9e2d51);
    block = (block << 15) | (block >>> 17);
    block = Math.imul(block, 0x1b873593);
    hash ^= block;
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
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
      tail = Math.imul(tail, 0xcc9e2d51);
      tail = (tail << 15) | (tail >>> 17);
      tail = Math.imul(tail, 0x1b873593);
      hash ^= tail;
  }
  hash ^= length;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** Seeds of the 32-bit words of a derived id: different primes, so the words are unrelated. */
const SEEDS = [0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f] as const;

/**
 * `words` 32-bit hashes of `text` as lowercase hex (8 characters each), never all zeros (an
 * all-zero trace or span id is invalid in OpenTelemetry). The UTF-8 is encoded once for all
 * words.
 */
export function hashHex(text: string, words: 2 | 4): string {
  const length = utf8Of(text);
  let allZero = true;
  for (let index = 0; index < words; index += 1) {
    const word = murmur3Bytes(scratch, length, SEEDS[index] ?? 0);
    if (word !== 0) allZero = false;
    idBytes.writeUInt32BE(word, index * 4);
  }
  if (allZero) idBytes[words * 4 - 1] = 1;
  // One native call makes the flat hex string; per-word toString(16) cost more than the hashing.
  return idBytes.toString('hex', 0, words * 4);
}

/** Where {@link hashHex} assembles an id's bytes. */
const idBytes = Buffer.alloc(16);
