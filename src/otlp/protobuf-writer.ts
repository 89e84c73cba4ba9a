/** Wire types of the protobuf encoding. */
export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

/** The tag of `field` with `wireType`: one byte for the fields below 16 OTLP's messages use. */
export const tag = (field: number, wireType: number): number => (field << 3) | wireType;

/** How many bytes `value` (not negative) takes as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size += 1;
  }
  return size;
}

/** `value` (a safe integer, not negative) as a varint, for bytes encoded once and kept. */
export function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 0x80) {
    bytes.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

/**
 * A small protobuf message of varint, string and nested-message fields, in the order given;
 * zeros and empty strings are left out, as proto3 does. For messages built once (an answer, a
 * status detail); the trace encoders write straight into their batch's buffer instead.
 */
export function protobufMessage(fields: readonly [number, number | string | Uint8Array][]): Buffer {
  const parts: Buffer[] = [];
  for (const [field, value] of fields) {
    if (typeof value === 'number') {
      if (value === 0) continue;
      parts.push(varint(tag(field, VARINT)), varint(value));
    } else {
      const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
      if (bytes.length === 0) continue;
      parts.push(varint(tag(field, LENGTH_DELIMITED)), varint(bytes.length), Buffer.from(bytes));
    }
  }
  return Buffer.concat(parts);
}

/** A length-delimited string field's content: its length and UTF-8 bytes. */
export function lengthDelimited(text: string): Buffer {
  const utf8 = Buffer.from(text, 'utf8');
  return Buffer.concat([varint(utf8.length), utf8]);
}

/** The content of a `KeyValue` message: `key` (the encoded key field) and a string value. */
export function stringKeyValue(key: Buffer, text: string): Buffer {
  const stringValue = Buffer.concat([
    Buffer.from([tag(1, LENGTH_DELIMITED)]),
    lengthDelimited(text),
  ]);
  return Buffer.concat([
    key,
    Buffer.from([tag(2, LENGTH_DELIMITED)]),
    varint(stringValue.length),
    stringValue,
  ]);
}

/** The value of each hex digit by its character code below 256; -1 for any other. */
const HEX_VALUES = new Int8Array(256).fill(-1);
for (let digit = 0; digit < 16; digit += 1) {
  HEX_VALUES[digit.toString(16).charCodeAt(0)] = digit;
  HEX_VALUES[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;
}

/** The value of a hex digit by its character code, or -1 (a code past 255 makes the OR -1). */
export function hexValue(code: number): number {
  return HEX_VALUES[code & 0xff]! | ((0xff - code) >> 31);
}
