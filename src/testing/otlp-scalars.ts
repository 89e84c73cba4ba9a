import { OtlpDecodeError } from './otlp-decode-error.js';
import { describeValue, fieldOf, join, type OtlpRecord } from './otlp-fields.js';

// Conversions of the OTLP scalars whose representation differs between protobuf and JSON: ids
// (bytes in protobuf, hex strings in OTLP/JSON), 64-bit integers (protobufjs `Long` objects, or
// JSON numbers and decimal strings), doubles (JSON may spell "NaN", "Infinity") and bytes
// (base64 strings in JSON).

/** The shape of a protobufjs `Long`, without depending on the `long` package's types. */
interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

function isLongLike(value: unknown): value is LongLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as LongLike).low === 'number' &&
    typeof (value as LongLike).high === 'number'
  );
}

function bigintOfLong(value: LongLike, signed: boolean): bigint {
  const bits = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  return signed && value.unsigned !== true ? BigInt.asIntN(64, bits) : bits;
}

/** Lowercase hex of `bytes`; `''` for none. */
export function hexOfBytes(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Field `name` as a trace id (`byteLength` 16) or span id (8) in lowercase hex, `''` when absent
 * or empty. JSON ids must be hex of the right length; a base64 string that decodes to the right
 * number of bytes (what some older exporters wrote) is accepted too.
 */
export function idField(
  record: OtlpRecord,
  name: string,
  where: string,
  byteLength: 8 | 16,
): string {
  const value = fieldOf(record, name);
  if (value === undefined || isEmptyArray(value)) return '';
  if (value instanceof Uint8Array) return hexOfBytes(value);
  if (typeof value === 'string') {
    if (value === '') return '';
    if (value.length === byteLength * 2 && HEX.test(value)) return value.toLowerCase();
    if (BASE64.test(value)) {
      const bytes = Buffer.from(value, 'base64');
      if (bytes.length === byteLength) return bytes.toString('hex');
    }
  }
  throw new OtlpDecodeError(
    `expected ${byteLength * 2} hex characters (${byteLength} bytes), got ${describeValue(value)}`,
    { where: join(where, name) },
  );
}

/**
 * Field `name` as a `fixed64` time in nanoseconds since the Unix epoch, `0n` when absent. JSON
 * writes it as a decimal string or a number.
 */
export function unixNanoField(record: OtlpRecord, name: string, where: string): bigint {
  const value = fieldOf(record, name);
  const result = value === undefined ? 0n : bigintOf(value, false);
  if (result === undefined || result < 0n) {
    throw new OtlpDecodeError(
      `expected an unsigned 64-bit integer (nanoseconds), got ${describeValue(value)}`,
      { where: join(where, name) },
    );
  }
  return result;
}

/**
 * An `int64` value: a number when it is a safe integer, otherwise a bigint, so that no precision
 * is lost and the common case stays easy to compare.
 */
export function int64Of(value: unknown, where: string): number | bigint {
  const result = bigintOf(value, true);
  if (result === undefined) {
    throw new OtlpDecodeError(`expected a 64-bit integer, got ${describeValue(value)}`, {
      where,
    });
  }
  return result >= BigInt(Number.MIN_SAFE_INTEGER) && result <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(result)
    : result;
}

function bigintOf(value: unknown, signed: boolean): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : undefined;
  if (typeof value === 'string') return /^-?\d+$/.test(value) ? BigInt(value) : undefined;
  if (isLongLike(value)) return bigintOfLong(value, signed);
  return undefined;
}

/** A `double` value; JSON may carry `"NaN"`, `"Infinity"`, `"-Infinity"` or a numeric string. */
export function doubleOf(value: unknown, where: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    if (value === 'NaN') return Number.NaN;
    if (value === 'Infinity') return Number.POSITIVE_INFINITY;
    if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
    const number = Number(value);
    if (value.trim() !== '' && !Number.isNaN(number)) return number;
  }
  throw new OtlpDecodeError(`expected a number, got ${describeValue(value)}`, { where });
}

/** A `bytes` value as a plain `Uint8Array` (a copy); JSON carries base64. */
export function bytesOf(value: unknown, where: string): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (isEmptyArray(value)) return new Uint8Array(0);
  if (typeof value === 'string' && BASE64.test(value)) {
    return new Uint8Array(Buffer.from(value, 'base64'));
  }
  throw new OtlpDecodeError(`expected base64 bytes, got ${describeValue(value)}`, { where });
}

/** protobufjs leaves an unset `bytes` field as a shared empty array on the prototype. */
function isEmptyArray(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}
