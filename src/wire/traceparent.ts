const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/;
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
  if (typeof value !== 'string' || value.length > MAX_TRACEPARENT_LENGTH) return false;
  const match = TRACEPARENT.exec(value);
  if (match === null) return false;
  const [, version, traceId, parentId, rest] = match;
  if (version === 'ff') return false;
  if (version === '00' && rest !== undefined) return false;
  return !ALL_ZERO.test(traceId ?? '') && !ALL_ZERO.test(parentId ?? '');
}
