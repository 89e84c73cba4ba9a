import { describe, expect, it } from 'vitest';
import { hashHex, murmur3 } from '../../src/otel/stable-hash.js';

describe('murmur3()', () => {
  it('matches the reference MurmurHash3 x86 32-bit values', () => {
    // Published test vectors of MurmurHash3_x86_32.
    expect(murmur3('', 0)).toBe(0);
    expect(murmur3('', 1)).toBe(0x514e28b7);
    expect(murmur3('hello', 0)).toBe(0x248bfa47);
    expect(murmur3('The quick brown fox jumps over the lazy dog', 0)).toBe(0x2e4ff723);
  });
});

describe('hashHex()', () => {
  it('gives the same id for the same text, however the string was built', () => {
    const id = 'a'.repeat(16) + 'b'.repeat(16);
    const built = ['trace', id].join('\u0000');
    const concatenated = `trace\u0000${id.slice(0, 10)}` + id.slice(10);
    expect(hashHex(built, 4)).toBe(hashHex(concatenated, 4));
    expect(hashHex(built, 4)).toMatch(/^[0-9a-f]{32}$/);
    expect(hashHex(built, 2)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('spreads different texts, non-ASCII included, to different ids', () => {
    const ids = new Set<string>();
    for (let index = 0; index < 10_000; index += 1) ids.add(hashHex(`call-${index}-é☃`, 2));
    expect(ids.size).toBe(10_000);
  });

  it('handles texts longer than its scratch buffer', () => {
    const long = 'x'.repeat(10_000);
    expect(hashHex(long, 4)).toBe(hashHex('x'.repeat(10_000), 4));
    expect(hashHex(long, 4)).not.toBe(hashHex(`${long}y`, 4));
  });
});
