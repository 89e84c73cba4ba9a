import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RecentKeys } from '../../../src/sidecar/pipeline/index.js';

describe('RecentKeys', () => {
  it('says a key was seen before only from its second time on', () => {
    const keys = new RecentKeys(10);
    expect(keys.seenBefore('evt-1')).toBe(false);
    expect(keys.seenBefore('evt-2')).toBe(false);
    expect(keys.seenBefore('evt-1')).toBe(true);
    expect(keys.seenBefore('evt-1')).toBe(true);
    expect(keys.seenBefore('evt-2')).toBe(true);
  });

  it('tells apart keys that differ in one unit, in length, or only beyond the ASCII range', () => {
    const keys = new RecentKeys(100);
    const distinct = ['', 'a', 'b', 'ab', 'ba', 'a\u0000', '\u0000a', 'é', 'e\u0301', '😀', '😁'];
    for (const key of distinct) expect(keys.seenBefore(key)).toBe(false);
    for (const key of distinct) expect(keys.seenBefore(key)).toBe(true);
  });

  it('remembers between maxKeys and twice that many keys, then forgets the oldest generation', () => {
    const keys = new RecentKeys(3);
    for (const key of ['a', 'b', 'c']) keys.seenBefore(key); // first generation, full
    for (const key of ['d', 'e', 'f']) keys.seenBefore(key); // second generation, full: a-c go
    expect(keys.seenBefore('d')).toBe(true);
    expect(keys.seenBefore('f')).toBe(true);
    expect(keys.seenBefore('a')).toBe(false);
  });

  it('reports no false repeat among 300,000 distinct ids and finds every one of the last 100,000 again', () => {
    const keys = new RecentKeys(100_000);
    const ids = Array.from({ length: 300_000 }, () => randomUUID().replaceAll('-', ''));
    let falseRepeats = 0;
    for (const id of ids) if (keys.seenBefore(id)) falseRepeats += 1;
    expect(falseRepeats).toBe(0);
    let found = 0;
    for (const id of ids.slice(-100_000)) if (keys.seenBefore(id)) found += 1;
    expect(found).toBe(100_000);
  });

  it('still knows every key after its tables grew, in both generations', () => {
    const keys = new RecentKeys(5000);
    const ids = Array.from({ length: 8000 }, (_, index) => `evt-${index}`);
    for (const id of ids) expect(keys.seenBefore(id)).toBe(false);
    // 5000 in the previous generation, 3000 in the current one, tables grown from 1,024 slots.
    for (const id of ids) expect(keys.seenBefore(id)).toBe(true);
  });

  it('refuses a capacity that is not a positive integer, naming it', () => {
    expect(() => new RecentKeys(0)).toThrow(/maxKeys must be a positive integer, got 0/);
    expect(() => new RecentKeys(2.5)).toThrow(/maxKeys/);
  });
});
