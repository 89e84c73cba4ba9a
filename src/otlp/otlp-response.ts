import { ProtobufReader, WIRE } from './protobuf-reader.js';
import { protobufMessage } from './protobuf-writer.js';

/**
 * Reading what an OTLP endpoint answers: the `partial_success` of an
 * `ExportTraceServiceResponse` and the `google.rpc.Status` of a failure, in protobuf or JSON
 * (the encoding the request used, or whatever `Content-Type` the answer names), read with the
 * one {@link ProtobufReader} of the OTLP decoders: the few fields needed, the rest skipped. A body that cannot be read decodes to nothing rather than throwing: the status line of
 * the answer still says what happened.
 */

/** What a 2xx answer says about spans the endpoint accepted but threw away. */
export interface PartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

/** The `code` and `message` of a `google.rpc.Status` failure body. */
export interface RpcStatus {
  code: number;
  message: string;
}

/** The `partial_success` of an `ExportTraceServiceResponse`, if it names rejections or a message. */
export function decodePartialSuccess(
  body: Uint8Array,
  contentType: string,
): PartialSuccess | undefined {
  if (body.length === 0) return undefined;
  if (isJson(contentType, body)) {
    const root = parseJson(body);
    const partial = field(root, 'partialSuccess', 'partial_success');
    if (partial === undefined || partial === null || typeof partial !== 'object') return undefined;
    const rejected = Number(field(partial, 'rejectedSpans', 'rejected_spans') ?? 0);
    const message = field(partial, 'errorMessage', 'error_message');
    return found(
      Number.isFinite(rejected) ? rejected : 0,
      typeof message === 'string' ? message : '',
    );
  }
  try {
    for (const entry of fieldsOf(body)) {
      if (entry.field !== 1 || !(entry.value instanceof Uint8Array)) continue;
      let rejected = 0;
      let message = '';
      for (const item of fieldsOf(entry.value)) {
        if (item.field === 1 && typeof item.value === 'number') rejected = item.value;
        if (item.field === 2 && item.value instanceof Uint8Array) message = utf8(item.value);
      }
      return found(rejected, message);
    }
  } catch {
    // Not protobuf after all: nothing can be said about partial success.
  }
  return undefined;
}

/**
 * The `google.rpc.Status` of a failure answer; a plain-text body (what a proxy in front of the
 * endpoint tends to send) comes back as its first line, with code 0.
 */
export function decodeRpcStatus(body: Uint8Array, contentType: string): RpcStatus | undefined {
  if (body.length === 0) return undefined;
  if (isJson(contentType, body)) {
    const root = parseJson(body);
    const message = field(root, 'message');
    const code = Number(field(root, 'code') ?? 0);
    if (typeof message === 'string' && message !== '') {
      return { code: Number.isFinite(code) ? code : 0, message };
    }
    return undefined;
  }
  if (contentType.includes('protobuf')) {
    try {
      let code = 0;
      let message = '';
      for (const entry of fieldsOf(body)) {
        if (entry.field === 1 && typeof entry.value === 'number') code = entry.value;
        if (entry.field === 2 && entry.value instanceof Uint8Array) message = utf8(entry.value);
      }
      return message === '' ? undefined : { code, message };
    } catch {
      return undefined;
    }
  }
  const text = utf8(body.subarray(0, 512)).split('\n')[0]!.trim();
  return text === '' ? undefined : { code: 0, message: text };
}

const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

/**
 * The `retry_delay` of a `google.rpc.RetryInfo` among the details of a protobuf
 * `google.rpc.Status` (a gRPC answer's `grpc-status-details-bin`), in milliseconds.
 */
export function decodeRetryInfoDelay(status: Uint8Array): number | undefined {
  try {
    for (const entry of fieldsOf(status)) {
      if (entry.field !== 3 || !(entry.value instanceof Uint8Array)) continue;
      let typeUrl = '';
      let value: Uint8Array | undefined;
      for (const item of fieldsOf(entry.value)) {
        if (item.field === 1 && item.value instanceof Uint8Array) typeUrl = utf8(item.value);
        if (item.field === 2 && item.value instanceof Uint8Array) value = item.value;
      }
      if (typeUrl !== RETRY_INFO_TYPE || value === undefined) continue;
      for (const item of fieldsOf(value)) {
        if (item.field !== 1 || !(item.value instanceof Uint8Array)) continue;
        let seconds = 0;
        let nanos = 0;
        for (const part of fieldsOf(item.value)) {
          if (part.field === 1 && typeof part.value === 'number') seconds = part.value;
          if (part.field === 2 && typeof part.value === 'number') nanos = part.value;
        }
        return seconds * 1000 + Math.floor(nanos / 1e6);
      }
      return 0;
    }
  } catch {
    // Unreadable details: no delay was given.
  }
  return undefined;
}

/**
 * A `google.rpc.Status` in protobuf, what a failure answer carries: `code` (field 1) and
 * `message` (field 2), each left out when empty.
 */
export function encodeRpcStatus(code: number, message: string): Buffer {
  return protobufMessage([
    [1, code],
    [2, message],
  ]);
}

/**
 * A `google.rpc.Status` whose details hold a `google.rpc.RetryInfo` asking to wait
 * `retryDelayMs`: what a gRPC server sends in `grpc-status-details-bin` to say when to retry.
 */
export function encodeRetryStatus(code: number, message: string, retryDelayMs: number): Buffer {
  const duration = protobufMessage([
    [1, Math.floor(retryDelayMs / 1000)],
    [2, (retryDelayMs % 1000) * 1e6],
  ]);
  const retryInfo = protobufMessage([[1, duration]]);
  const any = protobufMessage([
    [1, RETRY_INFO_TYPE],
    [2, retryInfo],
  ]);
  return protobufMessage([
    [1, code],
    [2, message],
    [3, any],
  ]);
}

/**
 * An `Export*ServiceResponse` in protobuf whose `partial_success` (field 1) holds
 * `rejectedSpans` (or log records, or data points: field 1) and `errorMessage` (field 2).
 */
export function encodePartialSuccess(rejectedSpans: number, errorMessage: string): Buffer {
  const partialSuccess = protobufMessage([
    [1, rejectedSpans],
    [2, errorMessage],
  ]);
  return protobufMessage([[1, partialSuccess]]);
}

function found(rejectedSpans: number, errorMessage: string): PartialSuccess | undefined {
  return rejectedSpans > 0 || errorMessage !== '' ? { rejectedSpans, errorMessage } : undefined;
}

function isJson(contentType: string, body: Uint8Array): boolean {
  if (contentType.includes('json')) return true;
  if (contentType.includes('protobuf')) return false;
  return body[0] === 0x7b; // '{'
}

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(utf8(body)) as unknown;
  } catch {
    return undefined;
  }
}

function field(record: unknown, ...names: string[]): unknown {
  if (record === null || typeof record !== 'object') return undefined;
  for (const name of names) {
    const value = (record as Record<string, unknown>)[name];
    if (value !== undefined) return value;
  }
  return undefined;
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** One top-level field of a protobuf message: a varint as a number, length-delimited as bytes. */
interface ProtobufField {
  field: number;
  value: number | Uint8Array | undefined;
}

/** The top-level fields of one protobuf message, in order; throws a `RangeError` on bad bytes. */
function* fieldsOf(message: Uint8Array): Generator<ProtobufField> {
  const reader = new ProtobufReader(message);
  while (reader.position < reader.length) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (wireType === WIRE.varint) {
      yield { field, value: Number(reader.int64()) };
    } else if (wireType === WIRE.lengthDelimited) {
      const end = reader.end(reader.length);
      const start = reader.position;
      reader.position = end;
      yield { field, value: message.subarray(start, end) };
    } else {
      reader.skip(wireType, reader.length);
      yield { field, value: undefined };
    }
  }
}
