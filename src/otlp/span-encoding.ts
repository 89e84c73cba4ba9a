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

/** What both encoders keep per attribute key for its string values. */
export interface RepeatedValue {
  /** The `KeyValue` key as written (protobuf bytes, or JSON up to the value). */
  readonly bytes: Buffer;
  /** The string value the key had last, and the whole `KeyValue` for it once it repeated. */
  text: string | undefined;
  pair: Buffer | undefined;
}

/**
 * The whole encoded `KeyValue` of `entry`'s key with the string `value`, when the key had the
 * same value the time before; otherwise `undefined`, and the value is remembered for next time.
 * Most string values repeat span after span (tool name, session, agent): the second time, the
 * pair is encoded once by `encodePair` and then copied. A value longer than
 * {@link MAX_CACHED_VALUE} is not kept (nor held on to): it is not worth a comparison.
 */
export function repeatedPair(
  entry: RepeatedValue,
  value: string,
  encodePair: (key: Buffer, value: string) => Buffer,
): Buffer | undefined {
  if (value !== entry.text) {
    entry.text = value.length <= MAX_CACHED_VALUE ? value : undefined;
    entry.pair = undefined;
  } else if (entry.pair === undefined) {
    entry.pair = encodePair(entry.bytes, value);
  }
  return entry.pair;
}
