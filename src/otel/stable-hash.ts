/**
 * MurmurHash3 (x86, 32-bit) of a string's UTF-16 code units, two units per 32-bit block, with
 * `seed`. Not cryptographic: it spreads event ids and call ids into trace and span ids that are
 * the same on every run and every machine, in tens of nanoseconds.
 */
export function murmur3(text: string, seed: number): number {
  let hash = seed >>> 0;
  const length = text.length;
  const blocks = length & ~1;
  for (let index = 0; index < blocks; index += 2) {
    let block = (text.charCodeAt(index) | (text.charCodeAt(index + 1) << 16)) >>> 0;
    block = Math.imul(block, 0xcc9e2d51);
    block = (block << 15) | (block >>> 17);
    block = Math.imul(block, 0x1b873593);
    hash ^= block;
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
  }
  if ((length & 1) === 1) {
    let block = text.charCodeAt(length - 1);
    block = Math.imul(block, 0xcc9e2d51);
    block = (block << 15) | (block >>> 17);
    block = Math.imul(block, 0x1b873593);
    hash ^= block;
  }
  hash ^= length * 2;
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
 * all-zero trace or span id is invalid in OpenTelemetry).
 */
export function hashHex(text: string, words: 2 | 4): string {
  let hex = '';
  for (let index = 0; index < words; index += 1) {
    hex += murmur3(text, SEEDS[index] ?? 0)
      .toString(16)
      .padStart(8, '0');
  }
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}
