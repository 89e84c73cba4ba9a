import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The `requestState` a served call hands the client between input rounds, sealed so the client
 * cannot forge or alter it (MCP 2026-07-28 makes the server verify the state's integrity): the
 * call's handle, the round it answers and the tool's name, with an expiry, as base64url JSON
 * under an HMAC-SHA256 tag keyed by a secret of this process. Signed, not encrypted: it names a
 * waiting call and holds nothing else.
 */

const PREFIX = 'tt1.';
const SECRET = randomBytes(32);

/** What a sealed state says. */
export interface SealedState {
  /** The waiting call's handle. */
  readonly call: string;
  /** The round whose answers the next request carries. */
  readonly round: number;
  /** The tool called. */
  readonly tool: string;
}

/** Seals `state` for `ttlMs` milliseconds. */
export function sealState(state: SealedState, ttlMs: number): string {
  const body = Buffer.from(
    JSON.stringify({ c: state.call, r: state.round, t: state.tool, e: Date.now() + ttlMs }),
  ).toString('base64url');
  return `${PREFIX}${body}.${tag(body)}`;
}

/**
 * What `token` says, when it is a state this process sealed for `tool` and not yet expired;
 * `undefined` for anything else (altered, forged, for another tool, expired, malformed).
 */
export function openState(token: string, tool: string): SealedState | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  const dot = token.lastIndexOf('.');
  if (dot <= PREFIX.length) return undefined;
  const body = token.slice(PREFIX.length, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = Buffer.from(tag(body), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let fields: { c?: unknown; r?: unknown; t?: unknown; e?: unknown };
  try {
    fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof fields;
  } catch {
    return undefined;
  }
  const { c, r, t, e } = fields;
  if (typeof c !== 'string' || typeof r !== 'number' || typeof e !== 'number') return undefined;
  if (t !== tool || e < Date.now()) return undefined;
  return { call: c, round: r, tool: t };
}

function tag(body: string): string {
  return createHmac('sha256', SECRET)
    .update(PREFIX + body)
    .digest('base64url');
}
