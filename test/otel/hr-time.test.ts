import { describe, expect, it } from 'vitest';
import { hrTimeFromUnixNano, hrTimeNear, millisecondsBetween } from '../../src/otel/hr-time.js';

const BASE = 1_777_636_800_020_001_000n;
const DAY = 86_400_000_000_000n;

/** hrTimeNear as it was written with a bigint subtraction: what it must still give. */
function bigintNear(base: bigint, baseHrTime: [number, number], unixNano: bigint): number[] {
  const delta = Number(unixNano - base);
  if (!Number.isSafeInteger(delta)) return hrTimeFromUnixNano(unixNano);
  const nanos = baseHrTime[1] + delta;
  const carry = Math.floor(nanos / 1e9);
  return [baseHrTime[0] + carry, nanos - carry * 1e9];
}

describe('hrTimeNear()', () => {
  it('gives what the bigint subtraction gave, near the base, far from it, before 1970', () => {
    const bases = [BASE, 0n, 999_999_999n, 2n ** 63n - 1n - 200n * DAY, 5n, -5_000_000_000n];
    const offsets = [0n, 1n, -1n, 999_999_999n, 1_000_000_000n, -1_000_000_001n, 7n * DAY];
    offsets.push(104n * DAY, 105n * DAY, -105n * DAY, 2n ** 53n, 2n ** 53n - 1n, 2n ** 64n);
    for (const base of bases) {
      const baseHrTime = hrTimeFromUnixNano(base);
      for (const offset of offsets) {
        const time = base + offset;
        expect(hrTimeNear(base, baseHrTime, time)).toEqual(bigintNear(base, baseHrTime, time));
      }
    }
  });

  it('is exact to the nanosecond for times within weeks of the base', () => {
    const baseHrTime = hrTimeFromUnixNano(BASE);
    for (const offset of [0n, 1n, -1n, 999_999_999n, -1_000_000_001n, 7n * DAY + 3n]) {
      expect(hrTimeNear(BASE, baseHrTime, BASE + offset)).toEqual(
        hrTimeFromUnixNano(BASE + offset),
      );
    }
  });
});

describe('millisecondsBetween()', () => {
  it('keeps the nanoseconds as the fraction, before and after', () => {
    expect(millisecondsBetween(BASE, BASE + 2_000_002n)).toBe(2.000002);
    expect(millisecondsBetween(BASE + 2_000_002n, BASE)).toBe(-2.000002);
    expect(millisecondsBetween(0n, 2n ** 64n)).toBe(Number(2n ** 64n) / 1e6);
  });
});
