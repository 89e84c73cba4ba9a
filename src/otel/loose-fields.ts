/** A payload's fields as read off the bus: each may be missing or of any type. */
export type Loose<T> = { readonly [K in keyof T]?: unknown };

const EMPTY = {};

/** The fields of a payload; none when it is not an object. */
export function fieldsOf<T>(payload: unknown): Loose<T> {
  return payload !== null && typeof payload === 'object' ? payload : EMPTY;
}

/** A string field as text (a number as its digits), `''` when of another type. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}
