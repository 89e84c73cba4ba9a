import { decodeAnyValue, decodeKeyValues } from './any-value.js';
import { decodeLogsProtobuf } from './decode-logs-protobuf.js';
import { decodeProtobufBody, parseJsonBody, requestEncodingOf } from './otlp-encoding.js';
import { enumField, fieldOf, stringField, uint32Field } from './otlp-fields.js';
import { idField, unixNanoField } from './otlp-scalars.js';
import type { ReceivedLogRecord } from './received-log-record.js';
import { forEachScopedItem } from './received-scope.js';

const SEVERITY_NAMES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];

/** `SEVERITY_NUMBER_INFO` → 9 and so on, for JSON that spells enum names. */
const SEVERITY_NUMBERS: Readonly<Record<string, number>> = Object.fromEntries([
  ['SEVERITY_NUMBER_UNSPECIFIED', 0],
  ...SEVERITY_NAMES.flatMap((name, index) =>
    ['', '2', '3', '4'].map((suffix, step) => [
      `SEVERITY_NUMBER_${name}${suffix}`,
      index * 4 + step + 1,
    ]),
  ),
]) as Record<string, number>;

/**
 * Decodes the body of an OTLP/HTTP logs export (`ExportLogsServiceRequest`, or a `LogsData`
 * object) into log records, in the order they appear. Encodings and errors are those of
 * `decodeTraceRequest`.
 */
export function decodeLogsRequest(body: Uint8Array, contentType: string): ReceivedLogRecord[] {
  const encoding = requestEncodingOf(contentType);
  if (encoding === 'protobuf') {
    return decodeProtobufBody(body, 'ExportLogsServiceRequest', decodeLogsProtobuf);
  }
  const root = parseJsonBody(body);
  const records: ReceivedLogRecord[] = [];
  forEachScopedItem(root, 'Logs', 'logRecords', (record, where, resource, scope) => {
    records.push({
      timeUnixNano: unixNanoField(record, 'timeUnixNano', where),
      observedTimeUnixNano: unixNanoField(record, 'observedTimeUnixNano', where),
      severityNumber: enumField(record, 'severityNumber', where, SEVERITY_NUMBERS),
      severityText: stringField(record, 'severityText', where),
      body: decodeAnyValue(fieldOf(record, 'body'), `${where}.body`),
      attributes: decodeKeyValues(record, 'attributes', where),
      droppedAttributesCount: uint32Field(record, 'droppedAttributesCount', where),
      flags: uint32Field(record, 'flags', where),
      traceId: idField(record, 'traceId', where, 16),
      spanId: idField(record, 'spanId', where, 8),
      eventName: stringField(record, 'eventName', where),
      resource,
      scope,
      encoding,
    });
  });
  return records;
}
