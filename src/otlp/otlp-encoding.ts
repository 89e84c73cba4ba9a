import { OtlpDecodeError } from './otlp-decode-error.js';
import { describeValue } from '../errors/index.js';
import type { OtlpRecord } from './otlp-fields.js';

/** The two OTLP/HTTP body encodings: protobuf (`application/x-protobuf`) and JSON. */
export type OtlpEncoding = 'json' | 'protobuf';

/**
 * The encoding a `Content-Type` header names, ignoring parameters such as `charset` and case, or
 * `undefined` for anything OTLP/HTTP does not define. The bare words `json` and `protobuf` are
 * accepted too, for callers that read files rather than HTTP requests.
 */
export function otlpEncodingOf(contentType: string | undefined): OtlpEncoding | undefined {
  const mediaType = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  switch (mediaType) {
    case 'application/json':
    case 'json':
      return 'json';
    case 'application/x-protobuf':
    case 'application/protobuf':
    case 'protobuf':
      return 'protobuf';
    default:
      return undefined;
  }
}

/** The `Content-Type` a response in `encoding` carries. */
export function contentTypeOf(encoding: OtlpEncoding): string {
  return encoding === 'json' ? 'application/json' : 'application/x-protobuf';
}

/**
 * The encoding of a request with `contentType`; throws an `OtlpDecodeError` for a content type
 * OTLP/HTTP does not define.
 */
export function requestEncodingOf(contentType: string): OtlpEncoding {
  const encoding = otlpEncodingOf(contentType);
  if (encoding === undefined) {
    throw new OtlpDecodeError(
      `unsupported content type ${JSON.stringify(contentType)}: expected application/x-protobuf or application/json`,
    );
  }
  return encoding;
}

/**
 * Runs `decode` over a protobuf body, turning whatever it throws (a truncated body, a bad
 * length, an invalid wire type) into an `OtlpDecodeError` about message `typeName`.
 */
export function decodeProtobufBody<T>(
  body: Uint8Array,
  typeName: string,
  decode: (body: Uint8Array) => T,
): T {
  try {
    return decode(body);
  } catch (error) {
    throw new OtlpDecodeError(`malformed protobuf ${typeName}: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

/** Parses an OTLP/JSON body (UTF-8 text holding one object) into the object the decoders walk. */
export function parseJsonBody(body: Uint8Array): OtlpRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw new OtlpDecodeError(`malformed JSON: ${messageOf(error)}`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new OtlpDecodeError(`expected a JSON object, got ${describeValue(parsed)}`);
  }
  return parsed as OtlpRecord;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
