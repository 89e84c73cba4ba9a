import { decodeKeyValues } from './any-value.js';
import { parseOtlpBody, type OtlpEncoding } from './otlp-encoding.js';
import {
  enumField,
  recordField,
  recordsField,
  stringField,
  uint32Field,
  type OtlpRecord,
} from './otlp-fields.js';
import { otlpProtoTypes } from './otlp-proto-schema.js';
import { idField, unixNanoField } from './otlp-scalars.js';
import { decodeResource, decodeScope } from './received-scope.js';
import type { ReceivedSpan, ReceivedSpanEvent, ReceivedSpanLink } from './received-span.js';

const SPAN_KINDS: Readonly<Record<string, number>> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};

const STATUS_CODES: Readonly<Record<string, number>> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/**
 * Decodes the body of an OTLP/HTTP trace export (`ExportTraceServiceRequest`, or a `TracesData`
 * object as the OTLP file exporter writes it) into spans, in the order they appear. The
 * `contentType` picks the encoding: `application/x-protobuf` or `application/json` (the bare
 * words `protobuf` and `json` work too). Protobuf is decoded with tooltrace's own copy of the
 * opentelemetry-proto schema, never with the exporter's code. Throws an `OtlpDecodeError` naming
 * the offending field when the body is malformed.
 */
export function decodeTraceRequest(body: Uint8Array, contentType: string): ReceivedSpan[] {
  const { root, encoding } = parseOtlpBody(
    body,
    contentType,
    otlpProtoTypes().exportTraceServiceRequest,
  );
  const spans: ReceivedSpan[] = [];
  recordsField(root as OtlpRecord, 'resourceSpans', '').forEach((resourceSpans, resourceIndex) => {
    const resourcePath = `resourceSpans[${resourceIndex}]`;
    const resource = decodeResource(resourceSpans, resourcePath);
    recordsField(resourceSpans, 'scopeSpans', resourcePath).forEach((scopeSpans, scopeIndex) => {
      const scopePath = `${resourcePath}.scopeSpans[${scopeIndex}]`;
      const scope = decodeScope(scopeSpans, scopePath);
      recordsField(scopeSpans, 'spans', scopePath).forEach((span, spanIndex) => {
        const spanPath = `${scopePath}.spans[${spanIndex}]`;
        spans.push({ ...decodeSpan(span, spanPath, encoding), resource, scope });
      });
    });
  });
  return spans;
}

function decodeSpan(
  span: OtlpRecord,
  where: string,
  encoding: OtlpEncoding,
): Omit<ReceivedSpan, 'resource' | 'scope'> {
  const status = recordField(span, 'status', where);
  const statusPath = `${where}.status`;
  return {
    traceId: idField(span, 'traceId', where, 16),
    spanId: idField(span, 'spanId', where, 8),
    parentSpanId: idField(span, 'parentSpanId', where, 8),
    traceState: stringField(span, 'traceState', where),
    flags: uint32Field(span, 'flags', where),
    name: stringField(span, 'name', where),
    kind: enumField(span, 'kind', where, SPAN_KINDS),
    startTimeUnixNano: unixNanoField(span, 'startTimeUnixNano', where),
    endTimeUnixNano: unixNanoField(span, 'endTimeUnixNano', where),
    attributes: decodeKeyValues(span, 'attributes', where),
    events: recordsField(span, 'events', where).map((event, index) =>
      decodeEvent(event, `${where}.events[${index}]`),
    ),
    links: recordsField(span, 'links', where).map((link, index) =>
      decodeLink(link, `${where}.links[${index}]`),
    ),
    status:
      status === undefined
        ? { code: 0, message: '' }
        : {
            code: enumField(status, 'code', statusPath, STATUS_CODES),
            message: stringField(status, 'message', statusPath),
          },
    droppedAttributesCount: uint32Field(span, 'droppedAttributesCount', where),
    droppedEventsCount: uint32Field(span, 'droppedEventsCount', where),
    droppedLinksCount: uint32Field(span, 'droppedLinksCount', where),
    encoding,
  };
}

function decodeEvent(event: OtlpRecord, where: string): ReceivedSpanEvent {
  return {
    name: stringField(event, 'name', where),
    timeUnixNano: unixNanoField(event, 'timeUnixNano', where),
    attributes: decodeKeyValues(event, 'attributes', where),
  };
}

function decodeLink(link: OtlpRecord, where: string): ReceivedSpanLink {
  return {
    traceId: idField(link, 'traceId', where, 16),
    spanId: idField(link, 'spanId', where, 8),
    attributes: decodeKeyValues(link, 'attributes', where),
  };
}
