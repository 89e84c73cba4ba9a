import type { ServerResponse } from 'node:http';
import { contentTypeOf, type OtlpEncoding } from './otlp-encoding.js';

/** gRPC status codes carried in the `google.rpc.Status` body of a failure answer. */
export const RPC_CODE = {
  invalidArgument: 3,
  notFound: 5,
  resourceExhausted: 8,
  unimplemented: 12,
  internal: 13,
  unavailable: 14,
} as const;

/** What an OTLP/HTTP server answers one request with, before it is written. */
export interface OtlpAnswer {
  status: number;
  /** Encoding of the answer body: the request's, or JSON when that was not understood. */
  encoding: OtlpEncoding;
  /** `undefined` for a success, else the `google.rpc.Status` code and message. */
  failure?: { code: number; message: string };
  /** Extra headers, e.g. `Retry-After` or `Allow`. */
  headers?: Record<string, string>;
}

/**
 * Writes `answer` as the OTLP/HTTP specification asks: a success carries an empty
 * `Export*ServiceResponse` (no bytes in protobuf, `{}` in JSON), a failure a `google.rpc.Status`,
 * both in the request's encoding.
 */
export function writeOtlpAnswer(response: ServerResponse, answer: OtlpAnswer): void {
  let body: Uint8Array;
  if (answer.failure === undefined) {
    body = answer.encoding === 'json' ? Buffer.from('{}') : new Uint8Array(0);
  } else if (answer.encoding === 'json') {
    body = Buffer.from(JSON.stringify(answer.failure));
  } else {
    body = encodeRpcStatus(answer.failure.code, answer.failure.message);
  }
  response.writeHead(answer.status, {
    'Content-Type': contentTypeOf(answer.encoding),
    'Content-Length': String(body.byteLength),
    ...answer.headers,
  });
  response.end(body);
}

/**
 * A `google.rpc.Status` in protobuf: `code` (field 1, varint) and `message` (field 2, UTF-8).
 * Two fields do not justify a protobuf library; the receiver's one protobuf codec is its reader.
 */
function encodeRpcStatus(code: number, message: string): Uint8Array {
  const text = Buffer.from(message, 'utf8');
  const bytes: number[] = [];
  const varint = (value: number): void => {
    while (value > 0x7f) {
      bytes.push((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    bytes.push(value);
  };
  if (code !== 0) {
    bytes.push(0x08);
    varint(code);
  }
  if (text.length > 0) {
    bytes.push(0x12);
    varint(text.length);
  }
  return Buffer.concat([Buffer.from(bytes), text]);
}
