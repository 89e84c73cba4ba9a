import { Buffer } from 'node:buffer';
import { ShortStringCache } from './short-string-cache.js';

/** Protobuf wire types (the low three bits of a field tag). */
export const WIRE = { varint: 0, fixed64: 1, lengthDelimited: 2, fixed32: 5 } as const;

/** `HEX_PAIRS[byte]` is the byte in two lowercase hex digits. */
const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** Shared by every reader: the same keys and names arrive in request after request. */
const strings = new ShortStringCache();

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/**
 * A cursor over protobuf wire format, reading the few scalar types OTLP uses straight into the
 * values the receiver hands out (hex ids, bigint nanoseconds, safe-integer numbers). It knows no
 * message types: the OTLP decoders drive it field by field, so that a request is read in one pass
 * with no intermediate message objects. Every read is bounds-checked; a body that ends early or
 * holds an impossible value throws a `RangeError` naming the byte offset.
 */
export class ProtobufReader {
  /** Offset of the next byte to read. */
  position = 0;
  readonly #bytes: Uint8Array;
  readonly #buffer: Buffer;
  readonly #view: DataView;

  constructor(body: Uint8Array) {
    this.#bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    this.#buffer = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    this.#view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  }

  /** Length of the whole body: the end of the outermost message. */
  get length(): number {
    return this.#bytes.length;
  }

  /** A varint of up to 32 bits (longer encodings keep their low 32 bits), as an unsigned number. */
  uint32(): number {
    const bytes = this.#bytes;
    let position = this.position;
    let value = 0;
    for (let shift = 0; shift < 32; shift += 7) {
      if (position >= bytes.length) this.#truncated();
      const byte = bytes[position++]!;
      value |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.position = position;
        return value >>> 0;
      }
    }
    // Bits 32 and up of a 64-bit varint (negative int32 values are sign-extended to ten bytes).
    for (let index = 0; index < 5; index += 1) {
      if (position >= bytes.length) this.#truncated();
      if (bytes[position++]! < 0x80) {
        this.position = position;
        return value >>> 0;
      }
    }
    throw new RangeError(`varint longer than 10 bytes at byte ${this.position}`);
  }

  /** An `int32` (or enum) field: a varint read as a signed 32-bit number. */
  int32(): number {
    return this.uint32() | 0;
  }

  /** A `bool` field. */
  bool(): boolean {
    return this.uint32() !== 0;
  }

  /**
   * An `int64` varint as a number when it is a safe integer, otherwise a bigint. Small
   * non-negative values, by far the common case, never touch bigint arithmetic.
   */
  int64(): number | bigint {
    const bytes = this.#bytes;
    const start = this.position;
    let position = start;
    let value = 0;
    let scale = 1;
    // Seven groups of seven bits stay below 2^49, well inside the safe integers.
    for (let index = 0; index < 7 && position < bytes.length; index += 1) {
      const byte = bytes[position++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        this.position = position;
        return value;
      }
      scale *= 128;
    }
    let bits = 0n;
    position = start;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (position >= bytes.length) this.#truncated();
      const byte = bytes[position++]!;
      bits |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.position = position;
        const signed = BigInt.asIntN(64, bits);
        return signed >= MIN_SAFE && signed <= MAX_SAFE ? Number(signed) : signed;
      }
    }
    throw new RangeError(`varint longer than 10 bytes at byte ${start}`);
  }

  /** A `fixed64` field as an unsigned bigint (OTLP times in nanoseconds). */
  fixed64(): bigint {
    const position = this.#advance(8);
    return this.#view.getBigUint64(position, true);
  }

  /** A `fixed32` field as an unsigned number. */
  fixed32(): number {
    const position = this.#advance(4);
    return this.#view.getUint32(position, true);
  }

  /** A `double` field. */
  double(): number {
    const position = this.#advance(8);
    return this.#view.getFloat64(position, true);
  }

  /**
   * Reads the length prefix of a length-delimited field and returns where its content ends,
   * checked against `limit`, the end of the enclosing message.
   */
  end(limit: number): number {
    const length = this.uint32();
    const end = this.position + length;
    if (end > limit) {
      throw new RangeError(
        `field of ${length} bytes at byte ${this.position} runs past its message, which ends at byte ${limit}`,
      );
    }
    return end;
  }

  /** The UTF-8 text from here to `end` (from {@link ProtobufReader.end}). */
  string(end: number): string {
    const start = this.position;
    this.position = end;
    return start === end ? '' : strings.decode(this.#buffer, start, end);
  }

  /** The bytes from here to `end` in lowercase hex, `''` for none. */
  hex(end: number): string {
    const bytes = this.#bytes;
    let hex = '';
    for (let position = this.position; position < end; position += 1) {
      hex += HEX_PAIRS[bytes[position]!]!;
    }
    this.position = end;
    return hex;
  }

  /** A copy of the bytes from here to `end`, as a plain `Uint8Array`. */
  bytes(end: number): Uint8Array {
    const copy = this.#bytes.slice(this.position, end);
    this.position = end;
    return copy;
  }

  /** Skips the value of a field of `wireType` (an unknown field, or one of an unexpected type). */
  skip(wireType: number, limit: number): void {
    switch (wireType) {
      case WIRE.varint:
        this.int64();
        return;
      case WIRE.fixed64:
        this.#advance(8);
        return;
      case WIRE.lengthDelimited:
        this.position = this.end(limit);
        return;
      case WIRE.fixed32:
        this.#advance(4);
        return;
      case 3: {
        // A group (proto2): skip fields until the matching end-group tag.
        for (;;) {
          if (this.position >= limit) this.#truncated();
          const tag = this.uint32();
          if ((tag & 7) === 4) return;
          this.skip(tag & 7, limit);
        }
      }
      default:
        throw new RangeError(`invalid wire type ${wireType} at byte ${this.position}`);
    }
  }

  /** Checks that a message's fields ended exactly where its length said. */
  expectEnd(end: number): void {
    if (this.position !== end) {
      throw new RangeError(`a field runs past its message's end at byte ${end}`);
    }
  }

  #advance(count: number): number {
    const position = this.position;
    if (position + count > this.#bytes.length) this.#truncated();
    this.position = position + count;
    return position;
  }

  #truncated(): never {
    throw new RangeError(`the body ends early, at byte ${this.#bytes.length}`);
  }
}
