const NANOS_PER_MILLI = 1_000_000n;

/** Wall-clock anchor: the epoch time in nanoseconds that the `hrtime` origin corresponds to. */
const epochAtOrigin = BigInt(Date.now()) * NANOS_PER_MILLI - process.hrtime.bigint();
/**
 * Nanoseconds since the Unix epoch from a monotonic high-resolution clock anchored once to the
 * wall clock, so two events in the same millisecond keep their order and a sub-millisecond tool
 * call still gets a real duration.
 */
export function nowUnixNano(): bigint {
  return epochAtOrigin + process.hrtime.bigint();
}

/** The `Date` (millisecond precision) for a time in nanoseconds since the epoch. */
export function dateFromUnixNano(unixNano: bigint): Date {
  return new Date(Number(unixNano / NANOS_PER_MILLI));
}

/** Nanoseconds since the epoch for a `Date`. */
export function unixNanoFromDate(date: Date): bigint {
  return BigInt(date.getTime()) * NANOS_PER_MILLI;
}
