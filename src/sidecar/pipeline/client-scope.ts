import { createHash } from 'node:crypto';

/** Marks a session id the pipeline scoped to a client: never in a decoded line (a control character). */
const MARK = '\u0001';

/**
 * The event id `id` of client `client` becomes on the sidecar's bus: 32 hex characters derived
 * from both, so two clients' `event_id`s never meet (and a restart derives the same one).
 */
export function scopedEventId(client: string, id: string): string {
  return createHash('sha256').update(client).update('\u0000').update(id).digest('hex').slice(0, 32);
}

/**
 * The session id `session` of client `client` becomes on the sidecar's bus, so the tracer,
 * which keys calls by session and tool call id, keeps each client's `tc_1` apart. Spans get
 * the original back (and `tooltrace.client`) from {@link unscopedSession}.
 */
export function scopedSession(client: string, session: string): string {
  return `${MARK}${client}${MARK}${session}`;
}

/** The client and original session of a scoped session id; `undefined` for any other. */
export function unscopedSession(value: string): { client: string; session: string } | undefined {
  if (!value.startsWith(MARK)) return undefined;
  const end = value.indexOf(MARK, 1);
  if (end < 0) return undefined;
  return { client: value.slice(1, end), session: value.slice(end + 1) };
}
