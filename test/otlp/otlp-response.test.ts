import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import {
  decodePartialSuccess,
  decodeRetryInfoDelay,
  decodeRpcStatus,
  encodePartialSuccess,
  encodeRetryStatus,
  encodeRpcStatus,
} from '../../src/otlp/index.js';

/**
 * The answer messages as opentelemetry-proto and googleapis define them, for protobufjs: an
 * encoder and decoder independent of the one under test.
 */
const { root } = protobuf.parse(`
syntax = "proto3";
message Any { string type_url = 1; bytes value = 2; }
message Duration { int64 seconds = 1; int32 nanos = 2; }
message RetryInfo { Duration retry_delay = 1; }
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
`);
const Status = root.lookupType('Status');
const RetryInfo = root.lookupType('RetryInfo');
const Response = root.lookupType('ExportTraceServiceResponse');

const PROTOBUF = 'application/x-protobuf';

describe('the OTLP answer reader', () => {
  describe('decodePartialSuccess()', () => {
    it('reads the rejected spans and message of a protobuf answer', () => {
      const body = Response.encode({
        partialSuccess: { rejectedSpans: 3, errorMessage: 'too old' },
      }).finish();
      expect(decodePartialSuccess(body, PROTOBUF)).toEqual({
        rejectedSpans: 3,
        errorMessage: 'too old',
      });
    });

    it('reads a JSON answer in either spelling of its keys', () => {
      const camel = Buffer.from('{"partialSuccess":{"rejectedSpans":"2","errorMessage":"x"}}');
      const snake = Buffer.from('{"partial_success":{"rejected_spans":2,"error_message":"x"}}');
      expect(decodePartialSuccess(camel, 'application/json')).toEqual({
        rejectedSpans: 2,
        errorMessage: 'x',
      });
      expect(decodePartialSuccess(snake, 'application/json')).toEqual({
        rejectedSpans: 2,
        errorMessage: 'x',
      });
    });

    it('says nothing of an empty success, or of bytes that are not protobuf', () => {
      expect(decodePartialSuccess(new Uint8Array(0), PROTOBUF)).toBeUndefined();
      expect(decodePartialSuccess(Response.encode({}).finish(), PROTOBUF)).toBeUndefined();
      expect(decodePartialSuccess(Uint8Array.from([0x0a, 0x7f, 0x01]), PROTOBUF)).toBeUndefined();
    });
  });

  describe('decodeRpcStatus()', () => {
    it('reads the code and message of a protobuf or JSON google.rpc.Status', () => {
      const body = Status.encode({ code: 8, message: 'slow down' }).finish();
      expect(decodeRpcStatus(body, PROTOBUF)).toEqual({ code: 8, message: 'slow down' });
      expect(
        decodeRpcStatus(Buffer.from('{"code":3,"message":"bad span"}'), 'application/json'),
      ).toEqual({ code: 3, message: 'bad span' });
    });

    it("takes a proxy's plain-text answer as its first line", () => {
      expect(decodeRpcStatus(Buffer.from('502 Bad Gateway\n<html>'), 'text/html')).toEqual({
        code: 0,
        message: '502 Bad Gateway',
      });
    });
  });

  describe('decodeRetryInfoDelay()', () => {
    it('reads the retry delay of a RetryInfo among the details, in milliseconds', () => {
      const retryInfo = RetryInfo.encode({
        retryDelay: { seconds: 2, nanos: 500_000_000 },
      }).finish();
      const status = Status.encode({
        code: 14,
        message: 'unavailable',
        details: [
          { typeUrl: 'type.googleapis.com/google.rpc.DebugInfo', value: Uint8Array.from([1]) },
          { typeUrl: 'type.googleapis.com/google.rpc.RetryInfo', value: retryInfo },
        ],
      }).finish();
      expect(decodeRetryInfoDelay(status)).toBe(2500);
    });

    it('gives no delay when the status names none or cannot be read', () => {
      expect(decodeRetryInfoDelay(Status.encode({ code: 14 }).finish())).toBeUndefined();
      expect(decodeRetryInfoDelay(Uint8Array.from([0x1a, 0x05, 0x0a]))).toBeUndefined();
    });
  });
});

describe('the OTLP answer writer', () => {
  it('writes a google.rpc.Status protobufjs reads back', () => {
    expect(Status.toObject(Status.decode(encodeRpcStatus(16, 'no token')))).toEqual({
      code: 16,
      message: 'no token',
    });
    expect(encodeRpcStatus(0, '')).toHaveLength(0);
  });

  it('writes a partial success protobufjs reads back, and the reader reads too', () => {
    const body = encodePartialSuccess(300, 'spans over the limit');
    const decoded = Response.toObject(Response.decode(body), { longs: Number });
    expect(decoded).toEqual({
      partialSuccess: { rejectedSpans: 300, errorMessage: 'spans over the limit' },
    });
    expect(decodePartialSuccess(body, PROTOBUF)).toEqual({
      rejectedSpans: 300,
      errorMessage: 'spans over the limit',
    });
  });

  it('writes a status asking to retry later, with the delay in a RetryInfo detail', () => {
    const body = encodeRetryStatus(14, 'busy', 1250);
    const status = Status.toObject(Status.decode(body)) as {
      code: number;
      details: { typeUrl: string; value: Uint8Array }[];
    };
    expect(status.code).toBe(14);
    expect(status.details[0]!.typeUrl).toBe('type.googleapis.com/google.rpc.RetryInfo');
    expect(
      RetryInfo.toObject(RetryInfo.decode(status.details[0]!.value), { longs: Number }),
    ).toEqual({ retryDelay: { seconds: 1, nanos: 250_000_000 } });
    expect(decodeRetryInfoDelay(body)).toBe(1250);
  });
});
