import type { ServerResponse } from 'node:http';
import {
  contentTypeOf,
  encodePartialSuccess,
  encodeRpcStatus,
  type OtlpEncoding,
} from '../otlp/read.js';

/** gRPC status codes carried in the `google.rpc.Status` body of a failure answer. */
export const RPC_CODE = {
  unknown: 2,
  invalidArgument: 3,
  notFound: 5,
  permissionDenied: 7,
  resourceExhausted: 8,
  unimplemented: 12,
  internal: 13,
  unavailable: 14,
  unauthenticated: 16,
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
  /** For a success: the `partial_success` to report (spans accepted but rejected). */
  partialSuccess?: { rejectedSpans: number; errorMessage: string };
}

/**
 * A full success as the OpenTelemetry Collector's OTLP receiver writes it: a response whose
 * `partial_success` is present and empty (`{"partialSuccess":{}}`, protobuf field 1 of length 0).
 */
const EMPTY_PARTIAL_SUCCESS_JSON = Buffer.from('{"partialSuccess":{}}');
const EMPTY_PARTIAL_SUCCESS_PROTOBUF = Uint8Array.of(0x0a, 0x00);

/**
 * Writes `answer` as the OTLP/HTTP specification asks and the Collector does: a success carries
 * an `Export*ServiceResponse` (with an empty `partial_success` when nothing was rejected), a
 * failure a `google.rpc.Status`, both in the request's encoding.
 */
export function writeOtlpAnswer(response: ServerResponse, answer: OtlpAnswer): void {
  let body: Uint8Array;
  const partial = answer.partialSuccess;
  if (answer.failure === undefined && partial !== undefined) {
    body =
      answer.encoding === 'json'
        ? Buffer.from(
            JSON.stringify({
              partialSuccess: {
                rejectedSpans: String(partial.rejectedSpans),
                errorMessage: partial.errorMessage,
              },
            }),
          )
        : encodePartialSuccess(partial.rejectedSpans, partial.errorMessage);
  } else if (answer.failure === undefined) {
    body = answer.encoding === 'json' ? EMPTY_PARTIAL_SUCCESS_JSON : EMPTY_PARTIAL_SUCCESS_PROTOBUF;
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
