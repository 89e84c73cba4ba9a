import { decodeKeyValues } from './any-value.js';
import { decodeTraceProtobuf } from './decode-trace-protobuf.js';
import { decodeProtobufBody, parseJsonBody, requestEncodingOf } from './otlp-encoding.js';
import {
  enumField,
  recordField,
  recordsField,
  stringField,
  uint32Field,
  type OtlpRecord,
} from './otlp-fields.js';
import { idField, unixNanoField } from './otlp-scalars.js';
import { forEachScopedItem, type ReceivedScope } from './received-scope.js';
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
 * words `protobuf` and `json` work too). Protobuf is read in one pass by tooltrace's own decoder
 * of the opentelemetry-proto wire format, never with the exporter's code. Throws an
 * `OtlpDecodeError` naming the offending field (JSON) or byte offset (protobuf) when the body is
 * malformed.
 */
export function decodeTraceRequest(body: Uint8Array, contentType: string): ReceivedSpan[] {
  const encoding = requestEncodingOf(contentType);
  if (encoding === 'protobuf') {
    return decodeProtobufBody(body, 'ExportTraceServiceRequest', decodeTraceProtobuf);
  }
  const root = parseJsonBody(body);
  const spans: ReceivedSpan[] = [];
  forEachScopedItem(root, 'Spans', 'spans', (span, where, resource, scope) => {
    spans.push(decodeSpan(span, where, resource, scope));
  });
  return spans;
}

function decodeSpan(
  span: OtlpRecord,
  where: string,
  resource: Record<string, unknown>,
  scope: ReceivedScope,
): ReceivedSpan {
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
    events: decodeEvents(span, where),
    links: decodeLinks(span, where),
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
    encoding: 'json',
    resource,
    scope,
  };
}

function decodeEvents(span: OtlpRecord, where: string): ReceivedSpanEvent[] {
  const list = recordsField(span, 'events', where);
  const events: ReceivedSpanEvent[] = [];
  for (let index = 0; index < list.length; index += 1) {
    events.push(decodeEvent(list[index]!, `${where}.events[${index}]`));
  }
  return events;
}

function decodeLinks(span: OtlpRecord, where: string): ReceivedSpanLink[] {
  const list = recordsField(span, 'links', where);
  const links: ReceivedSpanLink[] = [];
  for (let index = 0; index < list.length; index += 1) {
    links.push(decodeLink(list[index]!, `${where}.links[${index}]`));
  }
  return links;
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
