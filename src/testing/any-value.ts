import { OtlpDecodeError } from './otlp-decode-error.js';
import {
  describeValue,
  fieldOf,
  join,
  recordsField,
  snakeCaseOf,
  type OtlpRecord,
} from './otlp-fields.js';
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
 * Decodes an `AnyValue` message (protobuf or JSON) at path `where` into a {@link PlainValue}.
 * Exactly one of its fields is set; an `AnyValue` with none is empty and decodes to `undefined`.
 */
export function decodeAnyValue(anyValue: unknown, where: string): PlainValue {
  if (anyValue === undefined || anyValue === null) return undefined;
  if (typeof anyValue !== 'object' || Array.isArray(anyValue)) {
    throw new OtlpDecodeError(`expected an AnyValue object, got ${describeValue(anyValue)}`, {
      where,
    });
  }
  // A protobufjs message holds the set member of the `value` oneof as an own property; unset
  // members only exist as defaults on its prototype. JSON objects carry the set member alone.
  const record = anyValue as OtlpRecord;
  const has = (name: string): boolean => ownField(record, name) !== undefined;
  if (has('stringValue')) {
    const value = ownField(record, 'stringValue');
    if (typeof value === 'string') return value;
    throw new OtlpDecodeError(`expected a string, got ${describeValue(value)}`, {
      where: join(where, 'stringValue'),
    });
  }
  if (has('boolValue')) {
    const value = ownField(record, 'boolValue');
    if (typeof value === 'boolean') return value;
    throw new OtlpDecodeError(`expected a boolean, got ${describeValue(value)}`, {
      where: join(where, 'boolValue'),
    });
  }
  if (has('intValue')) return int64Of(ownField(record, 'intValue'), join(where, 'intValue'));
  if (has('doubleValue'))
    return doubleOf(ownField(record, 'doubleValue'), join(where, 'doubleValue'));
  if (has('bytesValue')) return bytesOf(ownField(record, 'bytesValue'), join(where, 'bytesValue'));
  if (has('arrayValue')) {
    const path = join(where, 'arrayValue');
    const array = ownField(record, 'arrayValue') as OtlpRecord;
    if (typeof array !== 'object' || Array.isArray(array)) {
      throw new OtlpDecodeError(`expected an object, got ${describeValue(array)}`, { where: path });
    }
    const values = fieldOf(array, 'values');
    if (values === undefined) return [];
    if (!Array.isArray(values)) {
      throw new OtlpDecodeError(`expected an array, got ${describeValue(values)}`, {
        where: join(path, 'values'),
      });
    }
    return values.map((value: unknown, index) => decodeAnyValue(value, `${path}.values[${index}]`));
  }
  if (has('kvlistValue')) {
    const path = join(where, 'kvlistValue');
    const list = ownField(record, 'kvlistValue') as OtlpRecord;
    if (typeof list !== 'object' || Array.isArray(list)) {
      throw new OtlpDecodeError(`expected an object, got ${describeValue(list)}`, { where: path });
    }
    return decodeKeyValues(list, 'values', path);
  }
  return undefined;
}

/**
 * Decodes the repeated `KeyValue` field `name` of `record` (attributes, a key-value list) into a
 * plain object. Should a key repeat, which OTLP forbids, the last value wins.
 */
export function decodeKeyValues(
  record: OtlpRecord,
  name: string,
  where: string,
): Record<string, PlainValue> {
  const result: Record<string, PlainValue> = {};
  const path = join(where, name);
  recordsField(record, name, where).forEach((keyValue, index) => {
    const key = fieldOf(keyValue, 'key') ?? '';
    if (typeof key !== 'string') {
      throw new OtlpDecodeError(`expected a string, got ${describeValue(key)}`, {
        where: `${path}[${index}].key`,
      });
    }
    Object.defineProperty(result, key, {
      value: decodeAnyValue(fieldOf(keyValue, 'value'), `${path}[${index}].value`),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });
  return result;
}

function ownField(record: OtlpRecord, name: string): unknown {
  if (Object.hasOwn(record, name) && record[name] !== null) return record[name];
  const snake = snakeCaseOf(name);
  if (Object.hasOwn(record, snake) && record[snake] !== null) return record[snake];
  return undefined;
}
