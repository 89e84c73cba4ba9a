const NANOS_PER_MILLI = 1_000_000n;

/** Wall-clock anchor: the epoch time in nanoseconds that the `hrtime` origin corresponds to. */
const epochAtOrigin = BigInt(Date.now()) * NANOS_PER_MILLI - process.hrtime.bigint();
/** The same anchor split into whole milliseconds and the nanoseconds beyond, as numbers. */
const epochAtOriginMillis = Number(epochAtOrigin / NANOS_PER_MILLI);
const epochAtOriginSubMilli = Number(epochAtOrigin % NANOS_PER_MILLI);

/**
 * Nanoseconds since the Unix epoch from a monotonic high-resolution clock anchored once to the
 * wall clock, so two events in the same millisecond keep their order and a sub-millisecond tool
 * call still gets a real duration.
 */
export function nowUnixNano(): bigint {
  return epochAtOrigin + process.hrtime.bigint();
}

/**
 * The current time both ways at once: nanoseconds since the epoch and the `Date` of the same
 * instant (truncated to the millisecond). The milliseconds are worked out in exact integer
 * arithmetic on numbers — the process uptime in nanoseconds stays below 2^53 for 104 days —
 * because a bigint division per event is one of the dearest steps of an emit.
 */
export function nowWithDate(): { unixNano: bigint; date: Date } {
  const uptime = process.hrtime.bigint();
  const uptimeNanos = Number(uptime);
  const subMilli = epochAtOriginSubMilli + (uptimeNanos % 1e6);
  const millis = epochAtOriginMillis + Math.floor(uptimeNanos / 1e6) + (subMilli >= 1e6 ? 1 : 0);
  return { unixNano: epochAtOrigin + uptime, date: new Date(millis) };
}

/** The `Date` (millisecond precision) for a time in nanoseconds since the epoch. */
export function dateFromUnixNano(unixNano: bigint): Date {
  return new Date(Number(unixNano / NANOS_PER_MILLI));
}

/** Nanoseconds since the epoch for a `Date`. */
export function unixNanoFromDate(date: Date): bigint {
  return BigInt(date.getTime()) * NANOS_PER_MILLI;
}
