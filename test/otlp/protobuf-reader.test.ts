import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { ProtobufReader, WIRE } from '../../src/otlp/protobuf-reader.js';

/** Bytes written by protobufjs's writer, an encoder independent of the reader under test. */
function written(write: (writer: protobuf.Writer) => protobuf.Writer): ProtobufReader {
  return new ProtobufReader(write(protobuf.Writer.create()).finish());
}

describe('ProtobufReader', () => {
  describe('int64()', () => {
    it.each([
      ['0', 0],
      ['127', 127],
      ['128', 128],
      ['562949953421311', 2 ** 49 - 1],
      ['562949953421312', 2 ** 49],
      ['9007199254740991', Number.MAX_SAFE_INTEGER],
      ['9007199254740992', 9_007_199_254_740_992n],
      ['9223372036854775807', 9_223_372_036_854_775_807n],
      ['-1', -1],
      ['-9007199254740991', Number.MIN_SAFE_INTEGER],
      ['-9007199254740992', -9_007_199_254_740_992n],
      ['-9223372036854775808', -9_223_372_036_854_775_808n],
    ])('reads %s as a number when safe, else a bigint', (decimal, expected) => {
      const reader = written((writer) => writer.int64(decimal).uint32(7));
      expect(reader.int64()).toBe(expected);
      expect(reader.uint32()).toBe(7);
    });
  });

  describe('uint32() and int32()', () => {
    it('reads unsigned values up to 2^32 - 1 and negative int32 sign-extended to ten bytes', () => {
      const reader = written((writer) => writer.uint32(0).uint32(300).uint32(0xffffffff).int32(-5));
      expect([reader.uint32(), reader.uint32(), reader.uint32(), reader.int32()]).toEqual([
        0, 300, 0xffffffff, -5,
      ]);
      expect(reader.position).toBe(reader.length);
    });
  });

  describe('fixed and floating-point values', () => {
    it('reads fixed64 as an unsigned bigint, fixed32, double and bool', () => {
      const reader = written((writer) =>
        writer.fixed64('18446744073709551615').fixed32(0xfffffffe).double(-2.5).bool(true),
      );
      expect(reader.fixed64()).toBe(18_446_744_073_709_551_615n);
      expect(reader.fixed32()).toBe(0xfffffffe);
      expect(reader.double()).toBe(-2.5);
      expect(reader.bool()).toBe(true);
    });
  });

  describe('length-delimited values', () => {
    it('reads UTF-8 text, short and long, repeated and not', () => {
      const long = 'x'.repeat(100);
      const texts = ['', 'service.name', 'héllo ✓ 🙂', long, 'service.name', long];
      const reader = written((writer) => {
        for (const text of texts) writer.string(text);
        return writer;
      });
      const read = texts.map(() => reader.string(reader.end(reader.length)));
      expect(read).toEqual(texts);
    });

    it('reads bytes as lowercase hex and as a plain copy', () => {
      const body = written((writer) =>
        writer.bytes(new Uint8Array([0xab, 0x01])).bytes(new Uint8Array([7, 8, 9])),
      );
      expect(body.hex(body.end(body.length))).toBe('ab01');
      const copy = body.bytes(body.end(body.length));
      expect(copy).toEqual(new Uint8Array([7, 8, 9]));
      expect(copy.constructor).toBe(Uint8Array);
    });

    it('refuses a length that runs past the enclosing message', () => {
      const reader = written((writer) => writer.string('abcdef'));
      expect(() => reader.end(4)).toThrow(RangeError);
      expect(() => reader.end(4)).toThrow(/runs past its message/);
    });
  });

  describe('skip()', () => {
    it('skips a value of each wire type, groups included', () => {
      const reader = written((writer) =>
        writer
          .uint32((1 << 3) | WIRE.varint)
          .int64('-1')
          .uint32((2 << 3) | WIRE.fixed64)
          .fixed64(1)
          .uint32((3 << 3) | WIRE.lengthDelimited)
          .string('skipped')
          .uint32((4 << 3) | WIRE.fixed32)
          .fixed32(1)
          .uint32((5 << 3) | 3)
          .uint32((1 << 3) | WIRE.varint)
          .uint32(9)
          .uint32((5 << 3) | 4)
          .uint32(42),
      );
      for (let field = 0; field < 5; field += 1) {
        const tag = reader.uint32();
        reader.skip(tag & 7, reader.length);
      }
      expect(reader.uint32()).toBe(42);
    });

    it('throws for an invalid wire type', () => {
      const reader = new ProtobufReader(new Uint8Array([0x0f]));
      const tag = reader.uint32();
      expect(() => reader.skip(tag & 7, reader.length)).toThrow(/invalid wire type 7/);
    });
  });

  describe('bounds', () => {
    it('throws a RangeError when the body ends inside a value', () => {
      expect(() => new ProtobufReader(new Uint8Array([0x80])).uint32()).toThrow(/ends early/);
      expect(() => new ProtobufReader(new Uint8Array([0xff, 0xff])).int64()).toThrow(/ends early/);
      expect(() => new ProtobufReader(new Uint8Array(7)).fixed64()).toThrow(/ends early/);
      expect(() => new ProtobufReader(new Uint8Array(3)).fixed32()).toThrow(RangeError);
    });

    it('throws for a varint longer than ten bytes', () => {
      const body = new Uint8Array(11).fill(0xff);
      expect(() => new ProtobufReader(body).int64()).toThrow(/longer than 10 bytes/);
      expect(() => new ProtobufReader(body).uint32()).toThrow(/longer than 10 bytes/);
    });

    it('reads a view at an offset into a larger buffer', () => {
      const whole = protobuf.Writer.create().uint32(1).string('inner').uint32(2).finish();
      const reader = new ProtobufReader(whole.subarray(1, whole.length - 1));
      expect(reader.string(reader.end(reader.length))).toBe('inner');
      reader.expectEnd(reader.length);
    });
  });
});
