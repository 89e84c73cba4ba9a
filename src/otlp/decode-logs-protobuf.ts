import type { PlainValue } from './any-value.js';
import {
  readAnyValue,
  readExportRequest,
  readKeyValue,
  UNSET_RESOURCE,
  UNSET_SCOPE,
} from './otlp-protobuf-common.js';
import { ProtobufReader } from './protobuf-reader.js';
import type { ReceivedLogRecord } from './received-log-record.js';

/**
 * Decodes a protobuf `ExportLogsServiceRequest` into log records in one pass over the bytes,
 * with the field numbers of opentelemetry-proto logs/v1. Throws a `RangeError` when the body is
 * not valid protobuf; the caller turns it into an `OtlpDecodeError`.
 */
export function decodeLogsProtobuf(body: Uint8Array): ReceivedLogRecord[] {
  return readExportRequest(new ProtobufReader(body), readLogRecord);
}

function readLogRecord(reader: ProtobufReader, end: number): ReceivedLogRecord {
  let timeUnixNano = 0n;
  let observedTimeUnixNano = 0n;
  let severityNumber = 0;
  let severityText = '';
  let body: PlainValue;
  const attributes: Record<string, PlainValue> = {};
  let droppedAttributesCount = 0;
  let flags = 0;
  let traceId = '';
  let spanId = '';
  let eventName = '';
  while (reader.position < end) {
    const tag = reader.uint32();
    switch (tag) {
      case 9: // 1 time_unix_nano
        timeUnixNano = reader.fixed64();
        break;
      case 16: // 2 severity_number
        severityNumber = reader.int32();
        break;
      case 26: // 3 severity_text
        severityText = reader.string(reader.end(end));
        break;
      case 42: // 5 body
        body = readAnyValue(reader, reader.end(end));
        break;
      case 50: // 6 attributes
        readKeyValue(reader, reader.end(end), attributes);
        break;
      case 56: // 7 dropped_attributes_count
        droppedAttributesCount = reader.uint32();
        break;
      case 69: // 8 flags
        flags = reader.fixed32();
        break;
      case 74: // 9 trace_id
        traceId = reader.hex(reader.end(end));
        break;
      case 82: // 10 span_id
        spanId = reader.hex(reader.end(end));
        break;
      case 89: // 11 observed_time_unix_nano
        observedTimeUnixNano = reader.fixed64();
        break;
      case 98: // 12 event_name
        eventName = reader.string(reader.end(end));
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
  reader.expectEnd(end);
  return {
    timeUnixNano,
    observedTimeUnixNano,
    severityNumber,
    severityText,
    body,
    attributes,
    droppedAttributesCount,
    flags,
    traceId,
    spanId,
    eventName,
    resource: UNSET_RESOURCE,
    scope: UNSET_SCOPE,
    encoding: 'protobuf',
  };
}
