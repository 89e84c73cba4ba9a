import { describe, expect, it } from 'vitest';
import { ShortStringCache } from '../../src/otlp/short-string-cache.js';

function decodeAll(cache: ShortStringCache, texts: readonly string[]): string[] {
  const buffer = Buffer.from(texts.join(''));
  let start = 0;
  return texts.map((text) => {
    const end = start + Buffer.byteLength(text);
    const decoded = cache.decode(buffer, start, end);
    start = end;
    return decoded;
  });
}

describe('ShortStringCache', () => {
  describe('decode()', () => {
    it('decodes the same text again from the cache', () => {
      const cache = new ShortStringCache();
      const texts = ['gen_ai.tool.name', 'search', 'gen_ai.tool.name', 'search', ''];
      expect(decodeAll(cache, texts)).toEqual(texts);
    });

    it('stays right when far more distinct strings pass through than it has slots', () => {
      const cache = new ShortStringCache();
      const texts = Array.from({ length: 20_000 }, (_, index) => `key.${index % 9000}`);
      expect(decodeAll(cache, texts)).toEqual(texts);
      expect(decodeAll(cache, texts)).toEqual(texts);
    });

    it('tells apart strings of the same length that differ in one byte', () => {
      const cache = new ShortStringCache();
      const texts = ['tooltrace.stream.aaaa', 'tooltrace.stream.aaab', 'tooltrace.stream.aaaa'];
      expect(decodeAll(cache, texts)).toEqual(texts);
    });

    it('decodes multi-byte UTF-8 and long strings', () => {
      const cache = new ShortStringCache();
      const texts = ['héllo ✓', '🙂', 'y'.repeat(200), 'héllo ✓', 'y'.repeat(200)];
      expect(decodeAll(cache, texts)).toEqual(texts);
    });

    it('decodes invalid UTF-8 as Buffer#toString does, cached or not', () => {
      const cache = new ShortStringCache();
      const buffer = Buffer.from([0x61, 0xff, 0x62]);
      const expected = buffer.toString('utf8');
      expect(cache.decode(buffer, 0, 3)).toBe(expected);
      expect(cache.decode(buffer, 0, 3)).toBe(expected);
    });
  });
});
