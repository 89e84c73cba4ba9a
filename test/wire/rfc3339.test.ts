import { describe, expect, it } from 'vitest';
import { formatRfc3339Nano, parseRfc3339Nano } from '../../src/wire/index.js';

const NOON = BigInt(Date.UTC(2026, 4, 1, 12, 0, 0)) * 1_000_000n;

describe('parseRfc3339Nano()', () => {
  it('reads a timestamp the same whether or not the one before shared its date and time', () => {
    // The parser skips the first 19 characters when they repeat the last timestamp's: the
    // fraction, zone and end must still be checked, and a bad repeat must not be cached.
    const cases: [string, bigint | undefined][] = [
      ['2026-05-01T12:00:00.5Z', NOON + 500_000_000n],
      ['2026-05-01T12:00:00Z', NOON],
      ['2026-05-01T12:00:00.000000001+02:00', NOON - 7_200_000_000_000n + 1n],
      ['2026-05-01T12:00:00.1-00:30', NOON + 1_800_000_000_000n + 100_000_000n],
      ['2026-05-01T12:00:00.Z', undefined],
      ['2026-05-01T12:00:00Zjunk', undefined],
      ['2026-05-01T12:00:00+24:00', undefined],
      ['2026-05-01T12:00:00', undefined],
      ['2026-05-01T12:00:00.25z', NOON + 250_000_000n],
    ];
    for (const before of ['2026-05-01T12:00:00.9Z', '1999-12-31T23:59:59Z', 'not a time', '']) {
      for (const [text, expected] of cases) {
        parseRfc3339Nano(before);
        expect(parseRfc3339Nano(text), `${text} after ${before}`).toBe(expected);
      }
    }
    expect(parseRfc3339Nano('2026-05-01T12:00:00.9Z')).toBe(NOON + 900_000_000n);
    expect(parseRfc3339Nano('2026-05-01t12:00:00.9Z')).toBe(NOON + 900_000_000n);
    expect(parseRfc3339Nano('2026-02-30T12:00:00.9Z')).toBeUndefined();
  });

  it('keeps all nine fractional digits', () => {
    expect(parseRfc3339Nano('2026-05-01T12:00:00.123456789Z')).toBe(NOON + 123_456_789n);
  });

  it('reads shorter fractions and none at all', () => {
    expect(parseRfc3339Nano('2026-05-01T12:00:00.5Z')).toBe(NOON + 500_000_000n);
    expect(parseRfc3339Nano('2026-05-01T12:00:00.000001Z')).toBe(NOON + 1_000n);
    expect(parseRfc3339Nano('2026-05-01T12:00:00Z')).toBe(NOON);
  });

  it('truncates digits past the ninth, as Go does', () => {
    expect(parseRfc3339Nano('2026-05-01T12:00:00.1234567899999Z')).toBe(NOON + 123_456_789n);
  });

  it('applies positive and negative offsets', () => {
    expect(parseRfc3339Nano('2026-05-01T14:00:00.000000001+02:00')).toBe(NOON + 1n);
    expect(parseRfc3339Nano('2026-05-01T06:30:00-05:30')).toBe(NOON);
    expect(parseRfc3339Nano('2026-05-02T00:00:00+12:00')).toBe(NOON);
  });

  it('accepts lowercase t and z', () => {
    expect(parseRfc3339Nano('2026-05-01t12:00:00z')).toBe(NOON);
  });

  it('reads leap days and dates before 1970', () => {
    expect(parseRfc3339Nano('2024-02-29T00:00:00Z')).toBe(
      BigInt(Date.UTC(2024, 1, 29)) * 1_000_000n,
    );
    expect(parseRfc3339Nano('1969-12-31T23:59:59.999999999Z')).toBe(-1n);
    expect(parseRfc3339Nano('0000-01-01T00:00:00Z')).toBe(-62_167_219_200n * 1_000_000_000n);
  });

  it.each([
    '',
    '2026-05-01',
    '2026-05-01T12:00:00',
    '2026-05-01 12:00:00Z',
    '2026-05-01T12:00:00.Z',
    '2026-05-01T12:00:00.123',
    '2026-05-01T12:00:00ZZ',
    '2026-05-01T12:00:00+0200',
    '2026-05-01T12:00:00+24:00',
    '2026-05-01T12:00:00+02:60',
    '2026-02-30T12:00:00Z',
    '2025-02-29T12:00:00Z',
    '2026-13-01T12:00:00Z',
    '2026-00-01T12:00:00Z',
    '2026-05-01T24:00:00Z',
    '2026-05-01T12:60:00Z',
    '2026-05-01T12:00:60Z',
    '2026/05/01T12:00:00Z',
    '+2026-05-01T12:00:00Z',
    '２０２６-05-01T12:00:00Z',
  ])('rejects %j', (text) => {
    expect(parseRfc3339Nano(text)).toBeUndefined();
  });
});

describe('formatRfc3339Nano()', () => {
  it("writes Go's RFC3339Nano form: significant fractional digits only", () => {
    expect(formatRfc3339Nano(NOON + 123_456_789n)).toBe('2026-05-01T12:00:00.123456789Z');
    expect(formatRfc3339Nano(NOON + 500_000_000n)).toBe('2026-05-01T12:00:00.5Z');
    expect(formatRfc3339Nano(NOON + 1n)).toBe('2026-05-01T12:00:00.000000001Z');
    expect(formatRfc3339Nano(NOON)).toBe('2026-05-01T12:00:00Z');
  });

  it('writes times before 1970', () => {
    expect(formatRfc3339Nano(-1n)).toBe('1969-12-31T23:59:59.999999999Z');
  });

  it('round-trips with parseRfc3339Nano across the whole year range', () => {
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const lowest = -62_167_219_200_000_000_000n;
    const span = 315_537_897_600_000_000_000n;
    for (let index = 0; index < 2000; index += 1) {
      const value =
        lowest + (BigInt(Math.floor(random() * 2 ** 52)) * span) / 2n ** 52n + BigInt(index);
      const text = formatRfc3339Nano(value);
      expect(parseRfc3339Nano(text)).toBe(value);
      const remainder = ((value % 1_000_000n) + 1_000_000n) % 1_000_000n;
      expect(new Date(text).getTime()).toBe(Number((value - remainder) / 1_000_000n));
    }
  });

  it('throws a RangeError outside years 0000-9999', () => {
    expect(() => formatRfc3339Nano(253_402_300_800n * 1_000_000_000n)).toThrow(RangeError);
    expect(() => formatRfc3339Nano(-62_167_219_200n * 1_000_000_000n - 1n)).toThrow(RangeError);
  });
});
