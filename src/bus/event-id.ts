import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const ID_CHARS = ID_BYTES * 2;
const POOL_IDS = 256;
const pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let hex = '';
let offset = 0;

/**
 * A new random event id: 32 lowercase hex characters (128 bits). Random bytes are drawn and
 * hex-encoded 256 ids at a time, and each id is a slice of that string: one `randomBytes` plus
 * `toString('hex')` per event would cost more than the rest of an emit.
 */
export function newEventId(): string {
  if (offset === hex.length) {
    randomFillSync(pool);
    hex = pool.toString('hex');
    offset = 0;
  }
  const id = hex.slice(offset, offset + ID_CHARS);
  offset += ID_CHARS;
  return id;
}

const EVENT_ID = /^[0-9a-f]{32}$/;

/** Whether `value` has the shape of an event id. */
export function isEventId(value: unknown): value is string {
  return typeof value === 'string' && EVENT_ID.test(value);
}
