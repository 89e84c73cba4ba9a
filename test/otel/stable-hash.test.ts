import { describe, expect, it } from 'vitest';
import { hashHex, murmur3, prefixedHasher } from '../../src/otel/stable-hash.js';

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
  it('gives the ids earlier versions gave, so a replay after an upgrade yields the same spans', () => {
    const id = '0123456789abcdef0123456789abcdef';
    expect(hashHex(`span\u0000${id}`, 2)).toBe('51f8eaae4139bf1d');
    expect(hashHex(`trace\u0000root\u0000${id}`, 4)).toBe('cda8bac28a8b8b636c8ef26364de28d3');
    expect(hashHex('span\u0000s1\u0000tc_é☃', 4)).toBe('c979a36746a04b21c93981f84dfcc7fc');
    expect(hashHex('', 2)).toBe('11fd02eb9bb31115');
    expect(hashHex('abc', 4)).toBe('daa08f7a9d85d271dbf44e5b73fc9dc9');
  });

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

describe('prefixedHasher()', () => {
  it('gives the id hashHex gives for the prefix and the text joined', () => {
    const span = prefixedHasher('span\u0000');
    const trace = prefixedHasher('trace\u0000');
    for (const text of [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      '0123456789abcdef0123456789abcdef',
      'tc_é☃',
    ]) {
      expect(span(text, 2)).toBe(hashHex(`span\u0000${text}`, 2));
      expect(trace(`root\u0000${text}`, 4)).toBe(hashHex(`trace\u0000root\u0000${text}`, 4));
    }
  });

  it('handles texts longer than its scratch buffer, and shorter ones after them', () => {
    const span = prefixedHasher('span\u0000');
    const long = 'é'.repeat(5_000);
    expect(span(long, 4)).toBe(hashHex(`span\u0000${long}`, 4));
    expect(span('short', 4)).toBe(hashHex('span\u0000short', 4));
  });
});
