/** OTLP span flags: the low byte is the W3C trace flags; these say whether the parent is remote. */
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;

/** The range of an OTLP `int_value`: numbers outside it go out as doubles. */
export const INT64_MIN = -(2 ** 63);
export const INT64_MAX = 2 ** 63;

/** Encoded attribute keys an encoder keeps at most (keys are few and repeat in every span). */
export const MAX_CACHED_KEYS = 4096;
/** String values and names longer than this are not kept encoded (ids and names are shorter). */
export const MAX_CACHED_VALUE = 256;
/** Span and event names an encoder keeps encoded at most (OpenTelemetry names are few). */
export const MAX_CACHED_NAMES = 1024;

/**
 * The OTLP `flags` of a span or link: its W3C trace flags, and whether its parent (or the linked
 * span) is remote, as both OTLP encoders write them.
 */
export function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | FLAG_HAS_IS_REMOTE | (isRemote === true ? FLAG_IS_REMOTE : 0);
}
