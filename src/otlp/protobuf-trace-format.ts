import type { AttributeValue, Attributes, HrTime } from '@opentelemetry/api';
import type { EncodingBatch, SpanGroup } from './encoding-batch.js';
import type { NumberTypes } from './number-types.js';
import {
  FIXED64,
  hexValue,
  LENGTH_DELIMITED,
  lengthDelimited,
  ProtobufWriter,
  stringField,
  stringKeyValue,
  tag,
  VARINT,
  varintSize,
} from './protobuf-writer.js';
import type { RequestBuffers } from './request-buffers.js';
import {
  INT64_MAX,
  INT64_MIN,
  MAX_CACHED_KEYS,
  MAX_CACHED_NAMES,
  MAX_CACHED_VALUE,
  repeatedPair,
  type RepeatedValue,
} from './span-encoding.js';
import type { SpanResource, SpanScope, TraceFormat } from './trace-format.js';

/** What a format holds between requests: its buffer is the batch's. */
const EMPTY = Buffer.alloc(0);
/** Room for a tag and a length of up to 2^35: where a batch's outer lengths go, once known. */
const OUTER_ROOM = 6;

/**
 * The protobuf format of {@link OtlpTraceEncoder}, a {@link ProtobufWriter} over its batch's
 * buffer: a number or short ASCII attribute is written with its lengths known up front. What
 * repeats is encoded once and then copied: every attribute key, a key's string value while it
 * stays the same (tool name, session, agent), span and event names, the seconds of a time.
 * Numbers keep one OTLP type per attribute key ({@link NumberTypes}). What an SDK span can hold
 * is all there is to write: its attribute values are strings, numbers, booleans and arrays of
 * them (the SDK has no bytes or key-value list attributes), and its instrumentation scope has a
 * name, version and schema URL but no attributes; so no `bytes_value`, `kvlist_value` or scope
 * attributes are written, since none can reach it.
 */
export class ProtobufTraceFormat extends ProtobufWriter implements TraceFormat {
  readonly #buffers: RequestBuffers;
  readonly #numbers: NumberTypes;
  readonly #keys = new Map<string, EncodedKey>();
  /** Span and event names, their length and UTF-8 bytes. */
  readonly #names = new Map<string, Buffer>();
  /** The seconds of the last time written, and their nanoseconds' 32-bit halves. */
  #seconds = Number.NaN;
  #secondsLow = 0;
  #secondsHigh = 0;

  constructor(buffers: RequestBuffers, numbers: NumberTypes) {
    super(EMPTY);
    this.#buffers = buffers;
    this.#numbers = numbers;
  }

  load(batch: EncodingBatch): void {
    this.use(batch.buffer, batch.position, batch.view);
  }

  store(batch: EncodingBatch): void {
    batch.buffer = this.buffer;
    batch.view = this.view;
    batch.position = this.position;
  }

  /** A body that outgrew its buffer moves to a larger one of the encoder's buffers. */
  protected override grow(buffer: Buffer, used: number, needed: number): Buffer {
    return this.#buffers.grow(buffer, used, needed);
  }

  /**
   * Room for the `ResourceSpans` tag and length, the `resource` field, room for the
   * `ScopeSpans` tag and length, the `scope` field: the request up to the first group's spans.
   */
  openFirstGroup(batch: EncodingBatch, resource: SpanResource, scope: SpanScope): void {
    this.ensure(OUTER_ROOM);
    this.position += OUTER_ROOM;
    batch.resourceStart = this.position;
    const resourceMessage = this.begin(1);
    this.#attributes(1, resource.attributes);
    this.end(resourceMessage);
    batch.resourceEnd = this.position;
    this.ensure(OUTER_ROOM);
    this.position += OUTER_ROOM;
    batch.scopeStart = this.position;
    this.#scope(scope);
  }

  spanSeparator(): void {}

  /**
   * One group: the request is around its spans already; fills in the two outer lengths, moving
   * the resource field up to the `ScopeSpans` tag (a few hundred bytes).
   */
  closeOneGroup(batch: EncodingBatch, group: SpanGroup): Buffer {
    this.#schemaUrl(group.scope.schemaUrl);
    const scopeSpansLength = this.position - batch.scopeStart;
    this.#schemaUrl(group.resource.schemaUrl);
    const scopeSpansStart = batch.scopeStart - 1 - varintSize(scopeSpansLength);
    this.tagAndLength(scopeSpansStart, tag(2, LENGTH_DELIMITED), scopeSpansLength);
    const resourceLength = batch.resourceEnd - batch.resourceStart;
    const resourceStart = scopeSpansStart - resourceLength;
    this.buffer.copyWithin(resourceStart, batch.resourceStart, batch.resourceEnd);
    const resourceSpansLength = this.position - resourceStart;
    const start = resourceStart - 1 - varintSize(resourceSpansLength);
    this.tagAndLength(start, tag(1, LENGTH_DELIMITED), resourceSpansLength);
    return this.#buffers.lendToKeep(this.buffer, start, this.position);
  }

  restart(): Buffer {
    const spans = this.buffer;
    this.use(this.#buffers.take(), 0);
    return spans;
  }

  openRequest(): void {}

  openResource(resource: SpanResource): number {
    const resourceSpans = this.begin(1);
    const resourceMessage = this.begin(1);
    this.#attributes(1, resource.attributes);
    this.end(resourceMessage);
    return resourceSpans;
  }

  openScope(scope: SpanScope): number {
    const scopeSpans = this.begin(2);
    this.#scope(scope);
    return scopeSpans;
  }

  copySpans(spans: Uint8Array): void {
    this.copy(spans);
  }

  closeScope(scope: SpanScope, mark: number): void {
    this.#schemaUrl(scope.schemaUrl);
    this.end(mark);
  }

  closeResource(resource: SpanResource, mark: number): void {
    this.#schemaUrl(resource.schemaUrl);
    this.end(mark);
  }

  closeRequest(): void {}

  body(): Buffer {
    return this.#buffers.lendToKeep(this.buffer, 0, this.position);
  }

  /** Fields 1 to 8; the flags are field 16, written by {@link closeSpan}. */
  openSpan(
    traceId: string,
    spanId: string,
    traceState: string,
    parentSpanId: string,
    _flags: number,
    name: string,
    kind: number,
    start: HrTime,
    end: HrTime,
  ): number {
    const message = this.begin(2);
    this.#hexBytes(1, traceId);
    this.#hexBytes(2, spanId);
    if (traceState !== '') this.string(3, traceState);
    if (parentSpanId !== '') this.#hexBytes(4, parentSpanId);
    this.#name(5, name);
    this.varintField(6, kind);
    this.#time(7, start);
    this.#time(8, end);
    return message;
  }

  spanAttributes(attributes: Attributes): void {
    this.#attributes(9, attributes);
  }

  droppedAttributes(count: number): void {
    this.varintField(10, count);
  }

  openEvents(): void {}

  event(
    _index: number,
    time: HrTime,
    name: string,
    attributes: Attributes | undefined,
    droppedAttributes: number,
  ): void {
    const eventMessage = this.begin(11);
    this.#time(1, time);
    this.#name(2, name);
    if (attributes !== undefined) this.#fewAttributes(3, attributes);
    if (droppedAttributes > 0) this.varintField(4, droppedAttributes);
    this.end(eventMessage);
  }

  closeEvents(): void {}

  droppedEvents(count: number): void {
    this.varintField(12, count);
  }

  openLinks(): void {}

  openLink(_index: number, traceId: string, spanId: string, traceState: string): number {
    const linkMessage = this.begin(13);
    this.#hexBytes(1, traceId);
    this.#hexBytes(2, spanId);
    if (traceState !== '') this.string(3, traceState);
    return linkMessage;
  }

  linkAttributes(attributes: Attributes): void {
    this.#fewAttributes(4, attributes);
  }

  linkDroppedAttributes(count: number): void {
    this.varintField(5, count);
  }

  closeLink(mark: number, flags: number): void {
    this.fixed32Field(6, flags);
    this.end(mark);
  }

  closeLinks(): void {}

  droppedLinks(count: number): void {
    this.varintField(14, count);
  }

  closeSpan(mark: number, code: number, message: string, flags: number): void {
    const status = this.begin(15);
    if (message !== '') this.string(2, message);
    this.varintField(3, code);
    this.end(status);
    this.fixed32Field(16, flags);
    this.end(mark);
  }

  /** The `scope` field of a `ScopeSpans`. */
  #scope(scope: SpanScope): void {
    const scopeMessage = this.begin(1);
    this.string(1, scope.name);
    if (scope.version !== undefined && scope.version !== '') this.string(2, scope.version);
    this.end(scopeMessage);
  }

  /** A `schema_url` (field 3 of `ResourceSpans` and of `ScopeSpans`), when there is one. */
  #schemaUrl(schemaUrl: string | undefined): void {
    if (schemaUrl !== undefined && schemaUrl !== '') this.string(3, schemaUrl);
  }

  /**
   * A span's (or resource's) attributes. Object.keys, not for-in: a span's attributes object is
   * in dictionary mode (V8 turns an object into one past about 20 keys added by name), which
   * for-in walks at a third more.
   */
  #attributes(field: number, attributes: Attributes): void {
    const fieldTag = tag(field, LENGTH_DELIMITED);
    const keys = Object.keys(attributes);
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index]!;
      this.#attribute(fieldTag, key, attributes[key]);
    }
  }

  /**
   * An event's (or link's) attributes: a few, in an object V8 keeps in fast mode, which for-in
   * walks from its enum cache without making an array of keys.
   */
  #fewAttributes(field: number, attributes: Attributes): void {
    const fieldTag = tag(field, LENGTH_DELIMITED);
    for (const key in attributes) this.#attribute(fieldTag, key, attributes[key]);
  }

  /** One `KeyValue` (nothing for `undefined` or `null`). */
  #attribute(fieldTag: number, key: string, value: AttributeValue | undefined): void {
    if (value === undefined || value === null) return;
    const entry = this.#key(key);
    if (typeof value === 'string') {
      const pair = repeatedPair(entry, value, stringKeyValue);
      if (pair !== undefined) {
        this.ensure(pair.length + 3);
        this.byte(fieldTag);
        this.varint(pair.length);
        this.copy(pair);
        return;
      }
      if (this.#shortAsciiPair(fieldTag, entry.bytes, value)) return;
    }
    if (typeof value === 'number' && value >= 0 && (entry.double || value < INT64_MAX)) {
      // A number's lengths are known before it is written: no length to fill in afterwards.
      const keyBytes = entry.bytes;
      const integer = !entry.double && Number.isInteger(value);
      if (!integer && !entry.double) {
        entry.double = true;
        this.#numbers.isDouble(key, value);
      }
      const anyLength = integer ? 1 + (value < 0x80 ? 1 : varintSize(value)) : 9;
      const pairLength = keyBytes.length + 2 + anyLength;
      this.ensure(pairLength + 6);
      const buffer = this.buffer;
      let at = this.position;
      buffer[at++] = fieldTag;
      if (pairLength < 0x80) {
        buffer[at++] = pairLength;
      } else {
        this.position = at;
        this.varint(pairLength);
        at = this.position;
      }
      buffer.set(keyBytes, at);
      at += keyBytes.length;
      buffer[at] = tag(2, LENGTH_DELIMITED);
      buffer[at + 1] = anyLength;
      if (integer && value < 0x80) {
        buffer[at + 2] = tag(3, VARINT);
        buffer[at + 3] = value;
        this.position = at + 4;
      } else if (integer) {
        buffer[at + 2] = tag(3, VARINT);
        this.position = at + 3;
        this.varint(value);
      } else {
        this.position = at + 2;
        this.doubleField(4, value);
      }
      return;
    }
    const keyValue = this.begin(fieldTag >>> 3);
    this.copy(entry.bytes);
    const anyValue = this.begin(2);
    if (typeof value === 'string') {
      this.string(1, value);
    } else if (typeof value === 'number') {
      if (!entry.double && Number.isInteger(value) && value >= INT64_MIN && value < INT64_MAX) {
        this.varintField(3, value);
      } else {
        if (!entry.double) {
          entry.double = true;
          this.#numbers.isDouble(key, value);
        }
        this.doubleField(4, value);
      }
    } else {
      if (!entry.double && Array.isArray(value)) {
        entry.double = this.#numbers.isDoubleArray(key, value);
      }
      this.#anyValue(value, entry.double);
    }
    this.end(anyValue);
    this.end(keyValue);
  }

  /**
   * A `KeyValue` with a string value, written with its lengths known up front when it is short
   * ASCII (ids are); false, with nothing written, when it is not.
   */
  #shortAsciiPair(fieldTag: number, key: Buffer, text: string): boolean {
    const length = text.length;
    const pairLength = key.length + 4 + length;
    if (pairLength >= 0x80) return false;
    this.ensure(pairLength + 2);
    const buffer = this.buffer;
    const start = this.position;
    buffer[start] = fieldTag;
    buffer[start + 1] = pairLength;
    buffer.set(key, start + 2);
    let at = start + 2 + key.length;
    buffer[at] = tag(2, LENGTH_DELIMITED);
    buffer[at + 1] = length + 2;
    buffer[at + 2] = tag(1, LENGTH_DELIMITED);
    buffer[at + 3] = length;
    at += 4;
    for (let index = 0; index < length; index += 1) {
      const code = text.charCodeAt(index);
      if (code >= 0x80) return false;
      buffer[at + index] = code;
    }
    this.position = at + length;
    return true;
  }

  /** The cache entry of an attribute key, its `KeyValue.key` encoded once per distinct key. */
  #key(key: string): EncodedKey {
    let entry = this.#keys.get(key);
    if (entry === undefined) {
      entry = {
        bytes: stringField(1, key),
        double: this.#numbers.isDoubleKey(key),
        text: undefined,
        pair: undefined,
      };
      if (this.#keys.size < MAX_CACHED_KEYS) this.#keys.set(key, entry);
    }
    return entry;
  }

  /** One value; `double` says how numbers go out (see {@link NumberTypes}). */
  #anyValue(value: AttributeValue, double: boolean): void {
    if (typeof value === 'string') {
      this.string(1, value);
    } else if (typeof value === 'number') {
      if (!double && Number.isInteger(value) && value >= INT64_MIN && value < INT64_MAX) {
        this.varintField(3, value);
      } else {
        this.doubleField(4, value);
      }
    } else if (typeof value === 'boolean') {
      this.varintField(2, value ? 1 : 0);
    } else if (Array.isArray(value)) {
      const array = this.begin(5);
      for (const item of value as unknown[]) {
        const entry = this.begin(1);
        if (item !== null && item !== undefined) this.#anyValue(item as AttributeValue, double);
        this.end(entry);
      }
      this.end(array);
    }
  }

  /** A span or event name: few distinct ones, each encoded once and then copied. */
  #name(field: number, text: string): void {
    let bytes = this.#names.get(text);
    if (bytes === undefined) {
      if (this.#names.size >= MAX_CACHED_NAMES || text.length > MAX_CACHED_VALUE) {
        this.string(field, text);
        return;
      }
      bytes = lengthDelimited(text);
      this.#names.set(text, bytes);
    }
    this.ensure(1);
    this.byte(tag(field, LENGTH_DELIMITED));
    this.copy(bytes);
  }

  /** Trace and span ids: hex text as the bytes it spells (16 or 8). */
  #hexBytes(field: number, hex: string): void {
    const length = hex.length >> 1;
    this.ensure(3 + length);
    this.byte(tag(field, LENGTH_DELIMITED));
    const buffer = this.buffer;
    const start = this.position;
    // Decoded here rather than by Buffer#write, a call into C++ per id.
    let invalid = length >= 0x80 ? -1 : 0;
    for (let index = 0; index < length; index += 1) {
      const high = hexValue(hex.charCodeAt(index * 2));
      const low = hexValue(hex.charCodeAt(index * 2 + 1));
      invalid |= high | low;
      buffer[start + 1 + index] = (high << 4) | low;
    }
    if (invalid >= 0) {
      buffer[start] = length;
      this.position = start + 1 + length;
      return;
    }
    // Not hex (no SDK makes such ids): what Buffer#write makes of it, as before.
    const written = buffer.write(hex, start + 1, 'hex');
    this.position = start + 1 + written;
    this.end(start);
  }

  #time(field: number, time: HrTime): void {
    this.ensure(9);
    this.byte(tag(field, FIXED64));
    // seconds * 1e9 + nanos exceeds 2^53: the 64 bits are built from 32-bit halves, those of
    // the seconds once per distinct second (the times of a batch share a few).
    const seconds = time[0];
    if (seconds !== this.#seconds) {
      this.#seconds = seconds;
      const high16 = Math.floor(seconds / 0x10000);
      const low16 = seconds - high16 * 0x10000;
      const high = high16 * 1e9;
      const highOver16 = Math.floor(high / 0x10000);
      const rest = (high - highOver16 * 0x10000) * 0x10000 + low16 * 1e9;
      const carry = Math.floor(rest / 0x100000000);
      this.#secondsHigh = highOver16 + carry;
      this.#secondsLow = rest - carry * 0x100000000;
    }
    let low = this.#secondsLow + time[1];
    let high = this.#secondsHigh;
    if (low >= 0x100000000 || low < 0) {
      const carry = Math.floor(low / 0x100000000);
      low -= carry * 0x100000000;
      high += carry;
    }
    this.fixed64Halves(low, high);
  }
}

/** An attribute key as the format keeps it: its `KeyValue.key` bytes, whether its numbers go
 * out as doubles ({@link NumberTypes}), and its last string value ({@link repeatedPair}). */
interface EncodedKey extends RepeatedValue {
  double: boolean;
}
