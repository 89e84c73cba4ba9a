const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;
/** Longer values are refused outright: no legitimate header comes near it. */
const MAX_TRACEPARENT_LENGTH = 512;

/**
 * Whether `value` is a valid W3C Trace Context `traceparent` header value
 * (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`): lowercase hex only, neither id all
 * zeros, version `ff` refused, and version `00` exactly 55 characters. Later versions may carry
 * more fields after a `-`, as the specification asks readers to allow.
 */
export function isValidTraceparent(value: unknown): value is string {
  return parseTraceparent(value) !== undefined;
}

/** The parts of a valid `traceparent`. */
export interface TraceparentParts {
  traceId: string;
  /** The parent span id. */
  spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  flags: number;
}

/**
 * The trace id, parent span id and flags of a valid W3C `traceparent` (the rules of
 * {@link isValidTraceparent}), or `undefined` when it is not one. One parser for the check and
 * for building the parent context, so the two can never disagree.
 */
export function parseTraceparent(value: unknown): TraceparentParts | undefined {
  if (typeof value !== 'string' || value.length > MAX_TRACEPARENT_LENGTH) return undefined;
  const match = TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const [, version, traceId = '', spanId = '', flags = '', rest] = match;
  if (version === 'ff') return undefined;
  if (version === '00' && rest !== undefined) return undefined;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}
