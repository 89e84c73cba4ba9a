import { describe, expect, it } from 'vitest';
import { PARTIAL, StreamSampler } from '../../../src/otel/tool-calls/stream-sampler.js';

function sample(middleCapacity: number, count: number, headSize = 0): number[] {
  const sampler = new StreamSampler(headSize, middleCapacity, true);
  for (let sequence = 1; sequence <= count; sequence += 1) {
    sampler.offer(PARTIAL, BigInt(sequence), sequence, 1, undefined);
  }
  return sampler.marks().map((mark) => mark.sequence);
}

describe('StreamSampler', () => {
  it('keeps everything while it fits', () => {
    expect(sample(5, 6)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('always keeps the last event', () => {
    for (const count of [7, 100, 12_345]) expect(sample(5, count).at(-1)).toBe(count);
  });

  it('keeps the middle evenly spaced and within capacity whatever the length', () => {
    for (const count of [48, 49, 100, 1_000, 10_000, 100_000]) {
      const kept = sample(47, count);
      const middle = kept.slice(0, -1);
      expect(middle.length).toBeLessThanOrEqual(47);
      expect(middle.length).toBeGreaterThanOrEqual(Math.min(24, count - 1));
      const gaps = new Set(middle.slice(1).map((value, index) => value - middle[index]!));
      expect(gaps.size).toBe(1);
      expect(middle[0]).toBe(1);
      // The spread reaches at least halfway into the stream.
      expect(middle.at(-1)!).toBeGreaterThanOrEqual(count / 2);
    }
  });

  it('gives the same choice on every run', () => {
    expect(sample(47, 9_999)).toEqual(sample(47, 9_999));
  });

  it('works with no middle at all', () => {
    expect(sample(0, 1_000)).toEqual([1_000]);
  });

  it('keeps the head as it came, then the spread and the last', () => {
    const kept = sample(47, 10_000, 16);
    expect(kept.slice(0, 16)).toEqual(Array.from({ length: 16 }, (_, index) => index + 1));
    expect(kept[16]).toBe(17);
    expect(kept.at(-1)).toBe(10_000);
    expect(kept.length).toBeLessThanOrEqual(64);
  });

  it('keeps only the head without a last slot', () => {
    const sampler = new StreamSampler(3, 0, false);
    for (let sequence = 1; sequence <= 10; sequence += 1) {
      sampler.offer(PARTIAL, BigInt(sequence), sequence, 1, undefined);
    }
    expect(sampler.marks().map((mark) => mark.sequence)).toEqual([1, 2, 3]);
  });
});
