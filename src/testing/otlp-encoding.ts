import type protobuf from 'protobufjs';
import { OtlpDecodeError } from './otlp-decode-error.js';
import { describeValue } from './otlp-fields.js';

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
 * Turns a request body into the object the decoders walk: `JSON.parse` of the UTF-8 text, or the
 * message protobufjs decodes with `type`. Both have lowerCamelCase keys.
 */
export function parseOtlpBody(
  body: Uint8Array,
  contentType: string,
  type: protobuf.Type,
): { root: object; encoding: OtlpEncoding } {
  const encoding = otlpEncodingOf(contentType);
  if (encoding === undefined) {
    throw new OtlpDecodeError(
      `unsupported content type ${JSON.stringify(contentType)}: expected application/x-protobuf or application/json`,
    );
  }
  if (encoding === 'protobuf') {
    try {
      return { root: type.decode(body), encoding };
    } catch (error) {
      throw new OtlpDecodeError(`malformed protobuf ${type.name}: ${messageOf(error)}`, {
        cause: error,
      });
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw new OtlpDecodeError(`malformed JSON: ${messageOf(error)}`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new OtlpDecodeError(`expected a JSON object, got ${describeValue(parsed)}`);
  }
  return { root: parsed, encoding };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
