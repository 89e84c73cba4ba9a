import { OtlpDecodeError } from './otlp-decode-error.js';
import { describeValue } from '../errors/index.js';
import { fieldOf, join, type OtlpRecord } from './otlp-fields.js';
import { bytesOf, doubleOf, int64Of } from './otlp-scalars.js';

/**
 * An OTLP `AnyValue` as plain JavaScript: `string`, `boolean`, `number` (doubles, and 64-bit
 * integers that are safe integers), `bigint` (64-bit integers beyond that), `Uint8Array`, arrays
 * of these, plain objects for key-value lists, and `undefined` for an empty value.
 */
export type PlainValue =
  | string
  | boolean
  | number
  | bigint
  | Uint8Array
  | undefined
  | PlainValue[]
  | { [key: string]: PlainValue };

/**
 * Decodes an OTLP/JSON `AnyValue` object at path `where` into a {@link PlainValue}. Exactly one
 * of its fields should be set (should several be, the first of string, bool, int, double, bytes,
 * array and kvlist wins); an `AnyValue` with none is empty and decodes to `undefined`.
 */
export function decodeAnyValue(anyValue: unknown, where: string): PlainValue {
  if (anyValue === undefined || anyValue === null) return undefined;
  if (typeof anyValue !== 'object' || Array.isArray(anyValue)) {
    throw new OtlpDecodeError(`expected an AnyValue object, got ${describeValue(anyValue)}`, {
      where,
    });
  }
  const record = anyValue as OtlpRecord;
  let value = record.stringValue ?? record.string_value;
  if (value !== undefined && value !== null) {
    if (typeof value === 'string') return value;
    throw new OtlpDecodeError(`expected a string, got ${describeValue(value)}`, {
      where: join(where, 'stringValue'),
    });
  }
  value = record.boolValue ?? record.bool_value;
  if (value !== undefined && value !== null) {
    if (typeof value === 'boolean') return value;
    throw new OtlpDecodeError(`expected a boolean, got ${describeValue(value)}`, {
      where: join(where, 'boolValue'),
    });
  }
  value = record.intValue ?? record.int_value;
  if (value !== undefined && value !== null) return int64Of(value, join(where, 'intValue'));
  value = record.doubleValue ?? record.double_value;
  if (value !== undefined && value !== null) return doubleOf(value, join(where, 'doubleValue'));
  value = record.bytesValue ?? record.bytes_value;
  if (value !== undefined && value !== null) return bytesOf(value, join(where, 'bytesValue'));
  value = record.arrayValue ?? record.array_value;
  if (value !== undefined && value !== null) {
    return decodeArrayValue(value, join(where, 'arrayValue'));
  }
  value = record.kvlistValue ?? record.kvlist_value;
  if (value !== undefined && value !== null) {
    const path = join(where, 'kvlistValue');
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new OtlpDecodeError(`expected an object, got ${describeValue(value)}`, { where: path });
    }
    return decodeKeyValues(value as OtlpRecord, 'values', path);
  }
  return undefined;
}

function decodeArrayValue(array: unknown, where: string): PlainValue[] {
  if (typeof array !== 'object' || Array.isArray(array)) {
    throw new OtlpDecodeError(`expected an object, got ${describeValue(array)}`, { where });
  }
  const values = fieldOf(array as OtlpRecord, 'values');
  if (values === undefined) return [];
  if (!Array.isArray(values)) {
    throw new OtlpDecodeError(`expected an array, got ${describeValue(values)}`, {
      where: join(where, 'values'),
    });
  }
  const result: PlainValue[] = [];
  for (let index = 0; index < values.length; index += 1) {
    result.push(decodeAnyValue(values[index], `${where}.values[${index}]`));
  }
  return result;
}

/**
 * Decodes the repeated `KeyValue` field `name` of an OTLP/JSON `record` (attributes, a key-value
 * list) into a plain object. Should a key repeat, which OTLP forbids, the last value wins; a
 * `__proto__` key becomes an own property like any other.
 */
export function decodeKeyValues(
  record: OtlpRecord,
  name: string,
  where: string,
): Record<string, PlainValue> {
  const result: Record<string, PlainValue> = {};
  const list = fieldOf(record, name);
  if (list === undefined) return result;
  const path = join(where, name);
  if (!Array.isArray(list)) {
    throw new OtlpDecodeError(`expected an array, got ${describeValue(list)}`, { where: path });
  }
  for (let index = 0; index < list.length; index += 1) {
    const keyValue: unknown = list[index];
    if (keyValue === null || typeof keyValue !== 'object' || Array.isArray(keyValue)) {
      throw new OtlpDecodeError(`expected an object, got ${describeValue(keyValue)}`, {
        where: `${path}[${index}]`,
      });
    }
    const key = fieldOf(keyValue as OtlpRecord, 'key') ?? '';
    if (typeof key !== 'string') {
      throw new OtlpDecodeError(`expected a string, got ${describeValue(key)}`, {
        where: `${path}[${index}].key`,
      });
    }
    const value = (keyValue as OtlpRecord).value;
    // Strings, the most common values, cannot be malformed once they are strings: skip building
    // the path that only an error message would use.
    const decoded =
      value !== null &&
      typeof value === 'object' &&
      typeof (value as OtlpRecord).stringValue === 'string'
        ? ((value as OtlpRecord).stringValue as string)
        : decodeAnyValue(value, `${path}[${index}].value`);
    if (key === '__proto__') {
      Object.defineProperty(result, key, {
        value: decoded,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      result[key] = decoded;
    }
  }
  return result;
}
