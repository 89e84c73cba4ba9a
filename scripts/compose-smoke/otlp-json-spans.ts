import type { FoundSpan } from './found-span.js';

type JsonObject = Record<string, unknown>;

/**
 * The spans of an OTLP/JSON trace document as Jaeger v2 and Tempo serve them. Both speak OTLP's
 * JSON mapping, with dialects: Jaeger's `/api/v3/traces` wraps it as `{"result":{"resourceSpans"}}`
 * with hex ids; Tempo's `/api/traces/<id>` answers `{"batches":[…]}` with base64 ids (its
 * protobuf JSON marshaller), `/api/v2/traces/<id>` wraps it in `{"trace":…}`. Enums come as
 * numbers or as names (`STATUS_CODE_ERROR`), 64-bit integers as numbers or strings. Throws naming
 * `where` and the field when the document is not trace JSON at all.
 */
export function spansOfOtlpJson(document: unknown, where: string): FoundSpan[] {
  const root = unwrap(document, where);
  const resourceSpans = root.resourceSpans ?? root.batches ?? [];
  const spans: FoundSpan[] = [];
  for (const [index, resourceSpan] of listAt(resourceSpans, `${where}: resourceSpans`).entries()) {
    const at = `${where}: resourceSpans[${index}]`;
    const resource = objectAt(resourceSpan, at);
    const resourceAttributes = attributesOf(
      objectOr(resource.resource, `${at}.resource`).attributes,
      `${at}.resource.attributes`,
    );
    const service = resourceAttributes['service.name'];
    const scopes = resource.scopeSpans ?? resource.instrumentationLibrarySpans ?? [];
    for (const [scopeIndex, scope] of listAt(scopes, `${at}.scopeSpans`).entries()) {
      const scopeAt = `${at}.scopeSpans[${scopeIndex}]`;
      const scopeSpans = objectAt(scope, scopeAt).spans ?? [];
      for (const [spanIndex, span] of listAt(scopeSpans, `${scopeAt}.spans`).entries()) {
        spans.push(spanOf(span, `${scopeAt}.spans[${spanIndex}]`, String(service ?? '')));
      }
    }
  }
  return spans;
}

/**
 * A trace or span id as lowercase hex: accepts hex (Jaeger, OTLP/JSON, Tempo's search results,
 * which may drop leading zeros of a trace id) and base64 (Tempo's trace by id). `''` for none
 * or an all-zero id.
 */
export function normalizeId(value: unknown, bytes: 8 | 16, where: string): string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value !== 'string') throw new TypeError(`${where}: expected an id string`);
  let hex: string;
  // Any length of hex up to the id's: Tempo trims leading zeros, which can leave an odd count.
  // Base64 of an id is never all hex digits: protobuf's JSON pads it with `=`.
  if (/^[0-9a-f]+$/i.test(value) && value.length <= bytes * 2) {
    hex = value.toLowerCase().padStart(bytes * 2, '0');
  } else if (/^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
    const decoded = Buffer.from(value, 'base64');
    if (decoded.length !== bytes) {
      throw new TypeError(
        `${where}: ${value} is neither ${bytes * 2} hex digits nor ${bytes} base64 bytes`,
      );
    }
    hex = decoded.toString('hex');
  } else {
    throw new TypeError(`${where}: ${value} is not a hex or base64 id`);
  }
  return /^0+$/.test(hex) ? '' : hex;
}

const STATUS_NAMES: Readonly<Record<string, FoundSpan['status']>> = {
  STATUS_CODE_UNSET: 'unset',
  STATUS_CODE_OK: 'ok',
  STATUS_CODE_ERROR: 'error',
};
const STATUS_NUMBERS: readonly FoundSpan['status'][] = ['unset', 'ok', 'error'];

function spanOf(value: unknown, where: string, service: string): FoundSpan {
  const span = objectAt(value, where);
  const status = objectOr(span.status, `${where}.status`);
  const code = status.code;
  const statusCode =
    code === undefined
      ? 'unset'
      : typeof code === 'number'
        ? STATUS_NUMBERS[code]
        : typeof code === 'string'
          ? STATUS_NAMES[code]
          : undefined;
  if (statusCode === undefined)
    throw new TypeError(`${where}.status.code: unknown code ${JSON.stringify(code)}`);
  if (typeof span.name !== 'string') throw new TypeError(`${where}.name: expected a string`);
  const spanId = normalizeId(span.spanId, 8, `${where}.spanId`);
  const traceId = normalizeId(span.traceId, 16, `${where}.traceId`);
  if (spanId === '' || traceId === '')
    throw new TypeError(`${where}: a span without a trace or span id`);
  return {
    traceId,
    spanId,
    parentSpanId: normalizeId(span.parentSpanId, 8, `${where}.parentSpanId`),
    name: span.name,
    service,
    status: statusCode,
    statusMessage: typeof status.message === 'string' ? status.message : '',
    attributes: attributesOf(span.attributes, `${where}.attributes`),
  };
}

function attributesOf(value: unknown, where: string): FoundSpan['attributes'] {
  const attributes: FoundSpan['attributes'] = {};
  for (const [index, entry] of listAt(value ?? [], where).entries()) {
    const keyValue = objectAt(entry, `${where}[${index}]`);
    if (typeof keyValue.key !== 'string')
      throw new TypeError(`${where}[${index}].key: expected a string`);
    const decoded = anyValue(keyValue.value);
    if (decoded !== undefined) attributes[keyValue.key] = decoded;
  }
  return attributes;
}

function anyValue(value: unknown): string | number | boolean | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const any = value as JsonObject;
  if (typeof any.stringValue === 'string') return any.stringValue;
  if (typeof any.boolValue === 'boolean') return any.boolValue;
  if (any.intValue !== undefined) return Number(any.intValue);
  if (any.doubleValue !== undefined) return Number(any.doubleValue);
  if (any.arrayValue !== undefined || any.kvlistValue !== undefined) return JSON.stringify(any);
  return undefined;
}

function unwrap(document: unknown, where: string): JsonObject {
  let root = objectAt(document, where);
  for (const wrapper of ['result', 'trace'] as const) {
    if (
      root.resourceSpans === undefined &&
      root.batches === undefined &&
      root[wrapper] !== undefined
    ) {
      root = objectAt(root[wrapper], `${where}: ${wrapper}`);
    }
  }
  return root;
}

function objectAt(value: unknown, where: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${where}: expected an object`);
  }
  return value as JsonObject;
}

function objectOr(value: unknown, where: string): JsonObject {
  return value === undefined || value === null ? {} : objectAt(value, where);
}

function listAt(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new TypeError(`${where}: expected a list`);
  return value as unknown[];
}
