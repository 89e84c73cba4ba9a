/** Wire types of the protobuf encoding. */
export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

/** The tag of `field` with `wireType`: one byte for the fields below 16 OTLP's messages use. */
export const tag = (field: number, wireType: number): number => (field << 3) | wireType;

/** Strings shorter than this are tried as ASCII first (and need one length byte). */
const SHORT_STRING = 0x80;
const EMPTY = Buffer.alloc(0);
/** The first buffer of a writer that was given none. */
const FIRST_SIZE = 256;

/** How many bytes `value` (not negative) takes as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size += 1;
  }
  return size;
}

/**
 * The one protobuf writer of `src/otlp`: every varint, fixed-width number, string and nested
 * message that tooltrace writes goes through it. A nested message reserves one length byte
 * ({@link begin}) and is shifted only when it turns out longer than 127 bytes ({@link end}).
 * Its state is public so that a hot path (the trace format, which extends it) can write the
 * bytes it knows up front straight into {@link buffer} after one {@link ensure}: the unchecked
 * writes ({@link byte}, {@link varint}, {@link int64}) make no room of their own, the rest do.
 * A writer made without a buffer grows its own; a subclass may take its memory elsewhere by
 * overriding {@link grow}.
 */
export class ProtobufWriter {
  buffer: Buffer;
  view: DataView;
  /** Where the next byte goes. */
  position = 0;

  constructor(buffer: Buffer = EMPTY) {
    this.buffer = buffer;
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  /** Writes into `buffer` from `position` on. */
  use(buffer: Buffer, position: number, view?: DataView): void {
    this.buffer = buffer;
    this.view = view ?? new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    this.position = position;
  }

  /** A copy of the bytes written: for bytes encoded once and kept. */
  bytes(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.position));
  }

  /** Makes room for `bytes` more bytes. */
  ensure(bytes: number): void {
    const needed = this.position + bytes;
    if (needed <= this.buffer.length) return;
    const grown = this.grow(this.buffer, this.position, needed);
    this.buffer = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  /** A buffer of at least `needed` bytes holding the first `used` bytes of `buffer`. */
  protected grow(buffer: Buffer, used: number, needed: number): Buffer {
    let size = Math.max(buffer.length * 2, FIRST_SIZE);
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    grown.set(buffer.subarray(0, used));
    return grown;
  }

  /** One byte (unchecked). */
  byte(value: number): void {
    this.buffer[this.position++] = value;
  }

  /** A varint of `value`, a safe integer not negative (unchecked: up to 8 bytes). */
  varint(value: number): void {
    const buffer = this.buffer;
    while (value >= 0x80) {
      buffer[this.position++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    buffer[this.position++] = value;
  }

  /** An `int64` varint (unchecked: up to 10 bytes); a negative one is ten, two's complement. */
  int64(value: number): void {
    if (value >= 0) {
      this.varint(value);
      return;
    }
    let bits = BigInt.asUintN(64, BigInt(value));
    const buffer = this.buffer;
    for (let index = 0; index < 9; index += 1) {
      buffer[this.position++] = Number(bits & 0x7fn) | 0x80;
      bits >>= 7n;
    }
    buffer[this.position++] = Number(bits);
  }

  /** A tag and a length (below 2^32) written at `at`, into room left for them. */
  tagAndLength(at: number, fieldTag: number, length: number): void {
    this.buffer[at] = fieldTag;
    this.#length(at + 1, length);
  }

  /** A varint field: an `int64`, `uint32`, enum or bool. */
  varintField(field: number, value: number): void {
    this.ensure(11);
    this.varint(tag(field, VARINT));
    this.int64(value);
  }

  /** A `fixed32` field. */
  fixed32Field(field: number, value: number): void {
    this.ensure(6);
    this.varint(tag(field, FIXED32));
    this.view.setUint32(this.position, value >>> 0, true);
    this.position += 4;
  }

  /** The eight bytes of a `fixed64` (a packed element, or a field's value). */
  fixed64(value: bigint): void {
    this.ensure(8);
    this.view.setBigUint64(this.position, BigInt.asUintN(64, value), true);
    this.position += 8;
  }

  /** The eight bytes of a `fixed64` from its 32-bit halves (unchecked). */
  fixed64Halves(low: number, high: number): void {
    this.view.setUint32(this.position, low >>> 0, true);
    this.view.setUint32(this.position + 4, high >>> 0, true);
    this.position += 8;
  }

  /** A `double` field. */
  doubleField(field: number, value: number): void {
    this.ensure(1);
    this.varint(tag(field, FIXED64));
    this.double(value);
  }

  /** The eight bytes of a `double` (a packed element, or a field's value). */
  double(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.position, value, true);
    this.position += 8;
  }

  /** Bytes encoded before; TypedArray#set is a V8 builtin, no trip into C++ as Buffer#copy. */
  copy(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buffer.set(bytes, this.position);
    this.position += bytes.length;
  }

  /** A `bytes` (or already encoded message) field. */
  bytesField(field: number, bytes: Uint8Array): void {
    this.ensure(11);
    this.varint(tag(field, LENGTH_DELIMITED));
    this.varint(bytes.length);
    this.copy(bytes);
  }

  /** Starts a length-delimited field; returns where its length goes, for {@link end}. */
  begin(field: number): number {
    this.ensure(6);
    this.varint(tag(field, LENGTH_DELIMITED));
    return this.position++;
  }

  /** Writes the length of the field begun at `start`, shifting its content if it needs room. */
  end(start: number): void {
    const length = this.position - start - 1;
    if (length < 0x80) {
      this.buffer[start] = length;
      return;
    }
    const size = varintSize(length);
    this.ensure(size - 1);
    this.buffer.copyWithin(start + size, start + 1, this.position);
    this.position += size - 1;
    this.#length(start, length);
  }

  /** A `string` field. */
  string(field: number, text: string): void {
    this.ensure(1);
    this.varint(tag(field, LENGTH_DELIMITED));
    this.stringContent(text);
  }

  /** A string's length and UTF-8 bytes: a string field's content. */
  stringContent(text: string): void {
    const length = text.length;
    this.ensure(5 + length * 3);
    const buffer = this.buffer;
    const start = this.position;
    // Short ASCII strings are the rule: copy them byte by byte (cheaper than a native call)
    // after one length byte; anything else goes through the UTF-8 encoder.
    if (length < SHORT_STRING) {
      let index = 0;
      for (; index < length; index += 1) {
        const code = text.charCodeAt(index);
        if (code >= 0x80) break;
        buffer[start + 1 + index] = code;
      }
      if (index === length) {
        buffer[start] = length;
        this.position = start + 1 + length;
        return;
      }
    }
    const written = buffer.write(text, start + 1, 'utf8');
    this.position = start + 1 + written;
    this.end(start);
  }

  /** A length (below 2^32) as a varint at `at`. */
  #length(at: number, length: number): void {
    const buffer = this.buffer;
    while (length >= 0x80) {
      buffer[at++] = (length & 0x7f) | 0x80;
      length >>>= 7;
    }
    buffer[at] = length;
  }
}

/** `value` (a safe integer, not negative) as a varint, for bytes encoded once and kept. */
export function varint(value: number): Buffer {
  const writer = new ProtobufWriter();
  writer.ensure(8);
  writer.varint(value);
  return writer.bytes();
}

/**
 * A small protobuf message of varint, string and nested-message fields, in the order given;
 * zeros and empty strings are left out, as proto3 does. For messages built once (an answer, a
 * status detail); the trace encoders write straight into their batch's buffer instead.
 */
export function protobufMessage(fields: readonly [number, number | string | Uint8Array][]): Buffer {
  const writer = new ProtobufWriter();
  for (const [field, value] of fields) {
    if (typeof value === 'number') {
      if (value !== 0) writer.varintField(field, value);
    } else if (typeof value === 'string') {
      if (value !== '') writer.string(field, value);
    } else if (value.length > 0) {
      writer.bytesField(field, value);
    }
  }
  return writer.bytes();
}

/** A length-delimited string field's content: its length and UTF-8 bytes. */
export function lengthDelimited(text: string): Buffer {
  const writer = new ProtobufWriter();
  writer.stringContent(text);
  return writer.bytes();
}

/** A string field, tag and content: a `KeyValue.key` encoded once and then copied. */
export function stringField(field: number, text: string): Buffer {
  const writer = new ProtobufWriter();
  writer.string(field, text);
  return writer.bytes();
}

/** The content of a `KeyValue` message: `key` (the encoded key field) and a string value. */
export function stringKeyValue(key: Buffer, text: string): Buffer {
  const writer = new ProtobufWriter();
  writer.copy(key);
  const value = writer.begin(2);
  writer.string(1, text);
  writer.end(value);
  return writer.bytes();
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
