import type { PlainValue } from './any-value.js';
import type { ProtobufReader } from './protobuf-reader.js';
import type { ReceivedScope } from './received-scope.js';

// Readers for the opentelemetry-proto messages that traces and logs share (common/v1,
// resource/v1 and the resource → scope → item nesting of an export request), decoding straight
// into the receiver's plain values. Tags are written as numbers, `field << 3 | wire type`, as
// generated protobuf code does; a known field with an unexpected wire type is skipped like an
// unknown one.

/** A decoded span or log record, before the resource and scope it sits in are known. */
export interface ScopedItem {
  resource: Record<string, unknown>;
  scope: ReceivedScope;
}

/** Placeholders for a {@link ScopedItem}'s resource and scope, replaced once they are read. */
export const UNSET_RESOURCE: Record<string, unknown> = Object.freeze({});
export const UNSET_SCOPE: ReceivedScope = Object.freeze({ name: '', version: '' });

/**
 * Reads a whole `ExportTraceServiceRequest` or `ExportLogsServiceRequest` (they share field
 * numbers down to the items): every item `readItem` decodes, in order, with the resource and
 * scope it belongs to.
 */
export function readExportRequest<T extends ScopedItem>(
  reader: ProtobufReader,
  readItem: (reader: ProtobufReader, end: number) => T,
): T[] {
  const items: T[] = [];
  const end = reader.length;
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) readResourceItems(reader, reader.end(end), items, readItem);
    else reader.skip(tag & 7, end);
  }
  return items;
}

/** `ResourceSpans` / `ResourceLogs`. */
function readResourceItems<T extends ScopedItem>(
  reader: ProtobufReader,
  end: number,
  items: T[],
  readItem: (reader: ProtobufReader, end: number) => T,
): void {
  const first = items.length;
  let resource: Record<string, unknown> = {};
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) resource = readKeyValueList(reader, reader.end(end));
    else if (tag === 18) readScopeItems(reader, reader.end(end), items, readItem);
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  // Set afterwards: protobuf allows the resource to follow the scopes.
  for (let index = first; index < items.length; index += 1) items[index]!.resource = resource;
}

/** `ScopeSpans` / `ScopeLogs`. */
function readScopeItems<T extends ScopedItem>(
  reader: ProtobufReader,
  end: number,
  items: T[],
  readItem: (reader: ProtobufReader, end: number) => T,
): void {
  const first = items.length;
  let scope: ReceivedScope = { name: '', version: '' };
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) scope = readScope(reader, reader.end(end));
    else if (tag === 18) items.push(readItem(reader, reader.end(end)));
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  for (let index = first; index < items.length; index += 1) items[index]!.scope = scope;
}

/**
 * A message whose field 1 is a repeated `KeyValue`, as a record: `Resource` (its attributes) and
 * `KeyValueList` (an `AnyValue`'s kvlist).
 */
function readKeyValueList(reader: ProtobufReader, end: number): Record<string, PlainValue> {
  const attributes: Record<string, PlainValue> = {};
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) readKeyValue(reader, reader.end(end), attributes);
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return attributes;
}

/** `InstrumentationScope`: its name and version. */
function readScope(reader: ProtobufReader, end: number): ReceivedScope {
  let name = '';
  let version = '';
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) name = reader.string(reader.end(end));
    else if (tag === 18) version = reader.string(reader.end(end));
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return { name, version };
}

/**
 * Reads one `KeyValue` into `target`. Should a key repeat, which OTLP forbids, the last value
 * wins; a `__proto__` key becomes an own property like any other.
 */
export function readKeyValue(
  reader: ProtobufReader,
  end: number,
  target: Record<string, PlainValue>,
): void {
  let key = '';
  let value: PlainValue;
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) key = reader.string(reader.end(end));
    else if (tag === 18) value = readAnyValue(reader, reader.end(end));
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}

/** Reads an `AnyValue`; an empty one is `undefined`. Of several oneof members the last wins. */
export function readAnyValue(reader: ProtobufReader, end: number): PlainValue {
  let value: PlainValue;
  while (reader.position < end) {
    const tag = reader.uint32();
    switch (tag) {
      case 10: // 1 string_value
        value = reader.string(reader.end(end));
        break;
      case 16: // 2 bool_value
        value = reader.bool();
        break;
      case 24: // 3 int_value
        value = reader.int64();
        break;
      case 33: // 4 double_value
        value = reader.double();
        break;
      case 42: // 5 array_value
        value = readArrayValue(reader, reader.end(end));
        break;
      case 50: // 6 kvlist_value
        value = readKeyValueList(reader, reader.end(end));
        break;
      case 58: // 7 bytes_value
        value = reader.bytes(reader.end(end));
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
  reader.expectEnd(end);
  return value;
}

function readArrayValue(reader: ProtobufReader, end: number): PlainValue[] {
  const values: PlainValue[] = [];
  while (reader.position < end) {
    const tag = reader.uint32();
    if (tag === 10) values.push(readAnyValue(reader, reader.end(end)));
    else reader.skip(tag & 7, end);
  }
  reader.expectEnd(end);
  return values;
}
