import type { HrTime } from '@opentelemetry/api';
import { endianness } from 'node:os';

const NANOS_PER_SECOND = 1_000_000_000n;
const NANOS_PER_MILLI = 1_000_000;

/**
 * The OpenTelemetry `[seconds, nanoseconds]` time of a bus timestamp, exact to the nanosecond.
 * A `number` of nanoseconds since the epoch would lose precision (past 2^53) and a `Date` keeps
 * only milliseconds, so the split is done in bigint arithmetic.
 */
export function hrTimeFromUnixNano(unixNano: bigint): HrTime {
  const seconds = unixNano / NANOS_PER_SECOND;
  return [Number(seconds), Number(unixNano - seconds * NANOS_PER_SECOND)];
}

/** Milliseconds between two bus timestamps, with the nanoseconds as the fraction. */
export function millisecondsBetween(startUnixNano: bigint, endUnixNano: bigint): number {
  return nanosBetween(startUnixNano, endUnixNano) / NANOS_PER_MILLI;
}

/**
 * {@link hrTimeFromUnixNano} for a time near a known one (`base`, already split into
 * `baseHrTime`): one subtraction instead of a bigint division, which matters once per stream
 * event. Exact while the two are less than 2^53 ns (104 days) apart; beyond, it splits directly.
 */
export function hrTimeNear(base: bigint, baseHrTime: HrTime, unixNano: bigint): HrTime {
  const delta = nanosBetween(base, unixNano);
  if (!Number.isSafeInteger(delta)) return hrTimeFromUnixNano(unixNano);
  const nanos = baseHrTime[1] + delta;
  const carry = Math.floor(nanos / 1e9);
  return [baseHrTime[0] + carry, nanos - carry * 1e9];
}

/** Where {@link nanosBetween} puts two bigints to read them back as 32-bit words. */
const int64s = new BigInt64Array(2);
const words = new Uint32Array(int64s.buffer);
const LITTLE_ENDIAN = endianness() === 'LE';
/** Index in `words` of the first int64's low and high word (the second's are 2 further). */
const LOW = LITTLE_ENDIAN ? 0 : 1;
const HIGH = LITTLE_ENDIAN ? 1 : 0;
const INT64_MAX = 2n ** 63n - 1n;
/** A difference of high words at most this large keeps the whole difference below 2^53. */
const MAX_HIGH_DELTA = 0x1fffff;

/**
 * `Number(unixNano - base)` without the bigint that subtraction allocates: both times are
 * written into a `BigInt64Array` and their difference is taken from its 32-bit words, in
 * numbers, exactly whenever it is below 2^53. Outside that (or for a time before 1970 or past
 * the int64 range), the bigint subtraction it stands for.
 */
function nanosBetween(base: bigint, unixNano: bigint): number {
  if (base >= 0n && unixNano >= 0n && base <= INT64_MAX && unixNano <= INT64_MAX) {
    int64s[0] = unixNano;
    int64s[1] = base;
    const high = words[HIGH]! - words[2 + HIGH]!;
    if (high <= MAX_HIGH_DELTA && high >= -MAX_HIGH_DELTA) {
      return high * 4294967296 + (words[LOW]! - words[2 + LOW]!);
    }
  }
  return Number(unixNano - base);
}

/**
 * Orders anything with a nanosecond bus time (bus events, stream marks) oldest first, for
 * `Array.prototype.sort`. Compares the bigints directly: their difference may not fit a number.
 */
export function byTime(left: { timeUnixNano: bigint }, right: { timeUnixNano: bigint }): number {
  const a = left.timeUnixNano;
  const b = right.timeUnixNano;
  return a < b ? -1 : a > b ? 1 : 0;
}
