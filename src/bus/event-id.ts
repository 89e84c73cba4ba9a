import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const POOL_IDS = 256;
const pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let offset = pool.length;

/**
 * A new random event id: 32 lowercase hex characters (128 bits). Random bytes are drawn 256 ids
 * at a time (one `randomFillSync` per id would cost more than the rest of an emit), and each id
 * is hex-encoded from its own 16 bytes into a string of its own. It used to be a `slice()` of
 * one hex string per 256 ids, which cost about 50 ns less per id, but V8 keeps a sliced string's
 * whole parent alive: every id a tracer remembered held 8 KB of hex text, up to 3.5 MB per
 * 1,000 calls.
 */
export function newEventId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

const EVENT_ID = /^[0-9a-f]{32}$/;

/** Whether `value` has the shape of an event id. */
export function isEventId(value: unknown): value is string {
  return typeof value === 'string' && EVENT_ID.test(value);
}
