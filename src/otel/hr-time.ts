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
