import { OtlpDecodeError } from './otlp-decode-error.js';
import { describeValue } from '../errors/index.js';
import { fieldOf, join, type OtlpRecord } from './otlp-fields.js';

// Conversions of the OTLP/JSON scalars whose spelling differs from protobuf's: ids (hex
// strings), 64-bit integers (JSON numbers or decimal strings), doubles (JSON may spell "NaN",
// "Infinity") and bytes (base64 strings).

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const DECIMAL = /^-?\d+$/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

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
  if (value === undefined) return '';
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
  const result = value === undefined ? 0n : bigintOf(value);
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
  // `-0` is no integer in int64: it decodes to 0, as the bigint route below would make it.
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value === 0 ? 0 : value;
  const result = bigintOf(value);
  // A Collector refuses what does not fit int64, as protobuf's JSON mapping says to.
  if (result === undefined || result < INT64_MIN || result > INT64_MAX) {
    throw new OtlpDecodeError(`expected a 64-bit integer, got ${describeValue(value)}`, {
      where,
    });
  }
  return result >= MIN_SAFE && result <= MAX_SAFE ? Number(result) : result;
}

function bigintOf(value: unknown): bigint | undefined {
  if (typeof value === 'string') return DECIMAL.test(value) ? BigInt(value) : undefined;
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : undefined;
  if (typeof value === 'bigint') return value;
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

/** A `bytes` value (base64 in JSON) as a plain `Uint8Array`. */
export function bytesOf(value: unknown, where: string): Uint8Array {
  if (typeof value === 'string' && BASE64.test(value)) {
    return new Uint8Array(Buffer.from(value, 'base64'));
  }
  throw new OtlpDecodeError(`expected base64 bytes, got ${describeValue(value)}`, { where });
}
