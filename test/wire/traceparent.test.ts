import { describe, expect, it } from 'vitest';
import { isValidTraceparent, parseTraceparent } from '../../src/wire/index.js';

describe('isValidTraceparent()', () => {
  it.each([
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future-field',
  ])('accepts %s', (value) => {
    expect(isValidTraceparent(value)).toBe(true);
  });

  it.each([
    ['a number', 42],
    ['undefined', undefined],
    ['an empty string', ''],
    ['uppercase hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01'],
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['an all-zero parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['version 00 with extra fields', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-xx'],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    [
      'a later version with junk after the flags',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x',
    ],
    ['a huge value', `01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-${'a'.repeat(1000)}`],
  ])('refuses %s', (_name, value) => {
    expect(isValidTraceparent(value)).toBe(false);
  });
});

describe('parseTraceparent()', () => {
  it('gives the ids and flags of a valid traceparent, later versions included', () => {
    expect(parseTraceparent(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`)).toEqual({
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      flags: 1,
    });
    expect(parseTraceparent(`01-${'a'.repeat(32)}-${'b'.repeat(16)}-00-extra`)).toEqual({
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      flags: 0,
    });
  });

  it('refuses exactly what isValidTraceparent refuses', () => {
    for (const value of [
      `ff-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
      `00-${'0'.repeat(32)}-${'b'.repeat(16)}-01`,
      `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01-extra`,
      'nonsense',
      42,
    ]) {
      expect(parseTraceparent(value)).toBeUndefined();
      expect(isValidTraceparent(value)).toBe(false);
    }
  });
});
