import { describe, expect, it } from 'vitest';
import { truncateUtf8 } from '../../src/otel/content-capture.js';
import { hrTimeFromUnixNano } from '../../src/otel/hr-time.js';
import { payloadBytes } from '../../src/bus/payload-bytes.js';

describe('truncateUtf8()', () => {
  it('leaves text within the limit as it is', () => {
    expect(truncateUtf8('hello', 5)).toBe('hello');
    expect(truncateUtf8('héllo', 6)).toBe('héllo');
  });

  it('cuts on a character boundary and ends with …, within the limit', () => {
    for (const text of ['a'.repeat(100), 'é'.repeat(100), '😀'.repeat(100), 'aé😀'.repeat(40)]) {
      for (const limit of [3, 4, 5, 6, 7, 10, 33, 64]) {
        const cut = truncateUtf8(text, limit);
        expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(limit);
        expect(cut.endsWith('…')).toBe(true);
        expect(cut).not.toContain('\uFFFD');
        expect(text.startsWith(cut.slice(0, -1))).toBe(true);
      }
    }
  });
});

describe('payloadBytes()', () => {
  it('measures strings and binary data exactly', () => {
    expect(payloadBytes('héllo')).toBe(6);
    expect(payloadBytes(new Uint8Array(10))).toBe(10);
    expect(payloadBytes(undefined)).toBe(0);
  });

  it('estimates structured payloads as their JSON size without serializing', () => {
    for (const value of [
      { a: 1, b: 'two', c: [true, false, null], d: { e: 'é' } },
      [1, 2, 3, 'four'],
      { nested: { deeper: { text: 'x'.repeat(50) } } },
    ]) {
      expect(payloadBytes(value)).toBe(Buffer.byteLength(JSON.stringify(value)));
    }
  });

  it('stops at its budget on huge payloads', () => {
    const huge = Array.from({ length: 100_000 }, (_, index) => index);
    expect(payloadBytes(huge)).toBeLessThan(JSON.stringify(huge).length);
  });
});

describe('hrTimeFromUnixNano()', () => {
  it('splits nanoseconds since the epoch exactly', () => {
    expect(hrTimeFromUnixNano(1_767_225_600_123_456_789n)).toEqual([1_767_225_600, 123_456_789]);
    expect(hrTimeFromUnixNano(999_999_999n)).toEqual([0, 999_999_999]);
    expect(hrTimeFromUnixNano(0n)).toEqual([0, 0]);
  });
});
