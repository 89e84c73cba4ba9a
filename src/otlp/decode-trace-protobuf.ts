import type { PlainValue } from './any-value.js';
import {
  readExportRequest,
  readKeyValue,
  UNSET_RESOURCE,
  UNSET_SCOPE,
} from './otlp-protobuf-common.js';
import { ProtobufReader } from './protobuf-reader.js';
import type { ReceivedSpan, ReceivedSpanEvent, ReceivedSpanLink } from './received-span.js';

/**
 * Decodes a protobuf `ExportTraceServiceRequest` into spans in one pass over the bytes, with the
 * field numbers of opentelemetry-proto trace/v1. Throws a `RangeError` when the body is not valid
 * protobuf; the caller turns it into an `OtlpDecodeError`.
 */
export function decodeTraceProtobuf(body: Uint8Array): ReceivedSpan[] {
  return readExportRequest(new ProtobufReader(body), readSpan);
}

function readSpan(reader: ProtobufReader, end: number): ReceivedSpan {
  let traceId = '';
  let spanId = '';
  let parentSpanId = '';
  let traceState = '';
  let flags = 0;
  let name = '';
  let kind = 0;
  let startTimeUnixNano = 0n;
  let endTimeUnixNano = 0n;
  const attributes: Record<string, PlainValue> = {};
  const events: ReceivedSpanEvent[] = [];
  const links: ReceivedSpanLink[] = [];
  let status: ReceivedSpan['status'] | undefined;
  let droppedAttributesCount = 0;
  let droppedEventsCount = 0;
  let droppedLinksCount = 0;
  while (reader.position < end) {
    const tag = reader.uint32();
    switch (tag) {
      case 10: // 1 trace_id
        traceId = reader.hex(reader.end(end));
        break;
      case 18: // 2 span_id
        spanId = reader.hex(reader.end(end));
        break;
      case 26: // 3 trace_state
        traceState = reader.string(reader.end(end));
        break;
      case 34: // 4 parent_span_id
        parentSpanId = reader.hex(reader.end(end));
        break;
      case 42: // 5 name
        name = reader.string(reader.end(end));
        break;
      case 48: // 6 kind
        kind = reader.int32();
        break;
      case 57: // 7 start_time_unix_nano
        startTimeUnixNano = reader.fixed64();
        break;
      case 65: // 8 end_time_unix_nano
        endTimeUnixNano = reader.fixed64();
        break;
      case 74: // 9 attributes
        readKeyValue(reader, reader.end(end), attributes);
        break;
      case 80: // 10 dropped_attributes_count
        droppedAttributesCount = reader.uint32();
        break;
      case 90: // 11 events
        events.push(readEvent(reader, reader.end(end)));
        break;
      case 96: // 12 dropped_events_count
        droppedEventsCount = reader.uint32();
        break;
      case 106: // 13 links
        links.push(readLink(reader, reader.end(end)));
        break;
      case 112: // 14 dropped_links_count
        droppedLinksCount = reader.uint32();
        break;
      case 122: // 15 status
        status = readStatus(reader, reader.end(end));
        break;
      case 133: // 16 flags
        flags = reader.fixed32();
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
  reader.expectEnd(end);
  return {
    traceId,
    spanId,
    parentSpanId,
    traceState,
    flags,
    name,
    kind,
    startTimeUnixNano,
    endTimeUnixNano,
    attributes,
    events,
    links,
    status: status ?? { code: 0, message: '' },
    droppedAttributesCount,
    droppedEventsCount,
    droppedLinksCount,
    encoding: 'protobuf',
    resource: UNSET_RESOURCE,
    scope: UNSET_SCOPE,
  };
}

function readEvent(reader: ProtobufReader, end: number): ReceivedSpanEvent {
  let name = '';
  let timeUnixNano = 0n;
  const attributes: Record<string, PlainValue> = {};
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 9) timeUnixNano = reader.fixed64();
    else if (tag === 18) name = reader.string(reader.end(end));
    else if (tag === 26) readKeyValue(reader, reader.end(end), attributes);
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return { name, timeUnixNano, attributes };
}

function readLink(reader: ProtobufReader, end: number): ReceivedSpanLink {
  let traceId = '';
  let spanId = '';
  const attributes: Record<string, PlainValue> = {};
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) traceId = reader.hex(reader.end(end));
    else if (tag === 18) spanId = reader.hex(reader.end(end));
    else if (tag === 34) readKeyValue(reader, reader.end(end), attributes);
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return { traceId, spanId, attributes };
}

function readStatus(reader: ProtobufReader, end: number): ReceivedSpan['status'] {
  let code = 0;
  let message = '';
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 18) message = reader.string(reader.end(end));
    else if (tag === 24) code = reader.int32();
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return { code, message };
}
