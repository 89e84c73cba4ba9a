import { describe, expect, it } from 'vitest';
import { DistinctCount } from '../../src/view/distinct-count.js';

/** A trace id as the SDK makes them: 32 hex digits. */
function traceId(index: number): string {
  return (index * 2_654_435_761 + 12_345).toString(16).padStart(32, '0');
}

describe('DistinctCount', () => {
  it('counts exactly up to its bound, each string once', () => {
    const count = new DistinctCount(100);
    for (let round = 0; round < 3; round += 1) {
      for (let index = 0; index < 100; index += 1) count.add(traceId(index));
    }
    expect(count.size).toBe(100);
    expect(count.estimated).toBe(false);
    expect(count.has(traceId(7))).toBe(true);
  });

  it('estimates past its bound within 2 % and no longer tells strings apart', () => {
    const count = new DistinctCount(1000);
    for (const total of [5_000, 200_000]) {
      for (let index = 0; index < total; index += 1) {
        count.add(traceId(index));
        // Seen again: an estimate counts a string once, however often it comes.
        if (index % 3 === 0) count.add(traceId(index));
      }
      expect(count.estimated).toBe(true);
      expect(Math.abs(count.size - total) / total).toBeLessThan(0.02);
    }
    expect(count.has(traceId(7))).toBe(false);
  });
});
