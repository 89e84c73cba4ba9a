import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const POOL_IDS = 256;
const pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let offset = pool.length;

/**
 * A new random event id: 32 lowercase hex characters (128 bits). Random bytes are drawn in
 * batches because one `randomBytes` call per event costs more than the rest of an emit.
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
