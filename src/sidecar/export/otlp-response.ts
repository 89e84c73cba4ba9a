/**
 * Reading what an OTLP endpoint answers: the `partial_success` of an
 * `ExportTraceServiceResponse` and the `google.rpc.Status` of a failure, in protobuf or JSON
 * (the encoding the request used, or whatever `Content-Type` the answer names). Two small
 * messages do not justify a protobuf library: this reads the few fields it needs and skips the
 * rest. A body that cannot be read decodes to nothing rather than throwing: the status line of
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
    const reader = new FieldReader(body);
    for (let entry = reader.next(); entry !== undefined; entry = reader.next()) {
      if (entry.field !== 1 || !(entry.value instanceof Uint8Array)) continue;
      let rejected = 0;
      let message = '';
      const inner = new FieldReader(entry.value);
      for (let item = inner.next(); item !== undefined; item = inner.next()) {
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
      const reader = new FieldReader(body);
      for (let entry = reader.next(); entry !== undefined; entry = reader.next()) {
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
    const reader = new FieldReader(status);
    for (let entry = reader.next(); entry !== undefined; entry = reader.next()) {
      if (entry.field !== 3 || !(entry.value instanceof Uint8Array)) continue;
      let typeUrl = '';
      let value: Uint8Array | undefined;
      const any = new FieldReader(entry.value);
      for (let item = any.next(); item !== undefined; item = any.next()) {
        if (item.field === 1 && item.value instanceof Uint8Array) typeUrl = utf8(item.value);
        if (item.field === 2 && item.value instanceof Uint8Array) value = item.value;
      }
      if (typeUrl !== RETRY_INFO_TYPE || value === undefined) continue;
      const info = new FieldReader(value);
      for (let item = info.next(); item !== undefined; item = info.next()) {
        if (item.field !== 1 || !(item.value instanceof Uint8Array)) continue;
        let seconds = 0;
        let nanos = 0;
        const duration = new FieldReader(item.value);
        for (let part = duration.next(); part !== undefined; part = duration.next()) {
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

/** Top-level fields of one protobuf message: varints as numbers, length-delimited as bytes. */
class FieldReader {
  readonly #bytes: Uint8Array;
  #position = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  next(): { field: number; value: number | Uint8Array | undefined } | undefined {
    if (this.#position >= this.#bytes.length) return undefined;
    const tag = this.#varint();
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        return { field, value: this.#varint() };
      case 1:
        this.#skip(8);
        return { field, value: undefined };
      case 2: {
        const length = this.#varint();
        const start = this.#position;
        this.#skip(length);
        return { field, value: this.#bytes.subarray(start, start + length) };
      }
      case 5:
        this.#skip(4);
        return { field, value: undefined };
      default:
        throw new RangeError(`wire type ${tag & 7} at ${this.#position}`);
    }
  }

  #varint(): number {
    let value = 0;
    let scale = 1;
    for (let index = 0; index < 10; index += 1) {
      if (this.#position >= this.#bytes.length) throw new RangeError('truncated varint');
      const byte = this.#bytes[this.#position++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
    throw new RangeError('varint too long');
  }

  #skip(bytes: number): void {
    if (this.#position + bytes > this.#bytes.length) throw new RangeError('truncated field');
    this.#position += bytes;
  }
}
