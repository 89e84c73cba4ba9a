import type { HrTime } from '@opentelemetry/api';

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
  return Number(endUnixNano - startUnixNano) / NANOS_PER_MILLI;
}

/**
 * {@link hrTimeFromUnixNano} for a time near a known one (`base`, already split into
 * `baseHrTime`): one bigint subtraction instead of a division, which matters once per stream
 * event. Exact while the two are less than 2^53 ns (104 days) apart; beyond, it splits directly.
 */
export function hrTimeNear(base: bigint, baseHrTime: HrTime, unixNano: bigint): HrTime {
  const delta = Number(unixNano - base);
  if (!Number.isSafeInteger(delta)) return hrTimeFromUnixNano(unixNano);
  const nanos = baseHrTime[1] + delta;
  const carry = Math.floor(nanos / 1e9);
  return [baseHrTime[0] + carry, nanos - carry * 1e9];
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
