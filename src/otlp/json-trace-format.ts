import type { Attributes, HrTime } from '@opentelemetry/api';
import type { EncodingBatch, SpanGroup } from './encoding-batch.js';
import type { NumberTypes } from './number-types.js';
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
/** Worst case of one UTF-16 unit in a JSON string: `\u001f` is six bytes. */
const MAX_BYTES_PER_UNIT = 6;

/** The encoder's fixed syntax, as bytes: copied with one TypedArray#set, not char by char. */
const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
const TRACE_ID = ascii('{"traceId":');
const SPAN_ID = ascii(',"spanId":');
const PARENT_SPAN_ID = ascii(',"parentSpanId":');
const FLAGS = ascii(',"flags":');
const NAME = ascii(',"name":');
const KIND = ascii(',"kind":');
const ATTRIBUTES = ascii(',"attributes":[');
const EVENTS = ascii(',"events":[');
const STATUS = ascii(',"status":{');
const RESOURCE_ATTRIBUTES = ascii('"attributes":[');
const CODE = ascii('"code":');
const STRING_VALUE = ascii('{"stringValue":');
const CLOSE_TWO = ascii('}}');
const INT_VALUE = '{"intValue":"';
const DOUBLE_VALUE = '{"doubleValue":';
/** Two decimal digits per number below 100, for writing times two digits at a time. */
const DIGIT_PAIRS = Buffer.from(
  Array.from({ length: 100 }, (_, value) => String(value).padStart(2, '0')).join(''),
  'latin1',
);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const COMMA = 0x2c;

/**
 * The OTLP/JSON writer of {@link OtlpJsonTraceEncoder}, following the OTLP JSON mapping:
 * lowerCamelCase keys, trace and span ids as hex, 64-bit integers (times, `intValue`) as decimal
 * strings, enums as numbers; a number as `intValue` or `doubleValue` by the one-type-per-key
 * rule ({@link NumberTypes}), NaN and the infinities as the strings protobuf's JSON mapping
 * uses. The fixed syntax is copied as bytes, and what repeats is escaped once and then copied:
 * every attribute key (its number type rides on that cache), a key's string value while it
 * stays the same, span and event names, a time field's name with the seconds.
 */
export class JsonTraceFormat implements TraceFormat {
  position = 0;
  #buffer: Buffer = EMPTY;
  readonly #buffers: RequestBuffers;
  readonly #numbers: NumberTypes;
  readonly #keys = new Map<string, EncodedKey>();
  /** Span and event names, as JSON strings after `,"name":`. */
  readonly #names = new Map<string, Buffer>();
  readonly #startTime = timeField(',"startTimeUnixNano":"');
  readonly #endTime = timeField(',"endTimeUnixNano":"');
  readonly #eventTime = timeField('{"timeUnixNano":"');

  constructor(buffers: RequestBuffers, numbers: NumberTypes) {
    this.#buffers = buffers;
    this.#numbers = numbers;
  }

  load(batch: EncodingBatch): void {
    this.#buffer = batch.buffer;
    this.position = batch.position;
  }

  store(batch: EncodingBatch): void {
    batch.buffer = this.#buffer;
    batch.position = this.position;
  }

  openFirstGroup(_batch: EncodingBatch, resource: SpanResource, scope: SpanScope): void {
    this.#ascii('{"resourceSpans":[');
    this.#resourceOpening(resource);
    this.#scopeOpening(scope);
  }

  spanSeparator(): void {
    this.#byte(COMMA);
  }

  /** One group: the request up to its spans starts the buffer; only its end is missing. */
  closeOneGroup(_batch: EncodingBatch, group: SpanGroup): Buffer {
    this.#scopeClosing(group.scope);
    this.#byte(0x5d);
    this.#resourceClosing(group.resource);
    this.#ascii(']}');
    return this.body();
  }

  restart(): Buffer {
    const spans = this.#buffer;
    this.#buffer = this.#buffers.take();
    this.position = 0;
    return spans;
  }

  openRequest(): void {
    this.#ascii('{"resourceSpans":[');
  }

  openResource(resource: SpanResource, first: boolean): number {
    if (!first) this.#byte(COMMA);
    this.#resourceOpening(resource);
    return 0;
  }

  openScope(scope: SpanScope, first: boolean): number {
    if (!first) this.#byte(COMMA);
    this.#scopeOpening(scope);
    return 0;
  }

  copySpans(spans: Uint8Array, first: boolean): void {
    if (!first) this.#byte(COMMA);
    this.#copy(spans);
  }

  closeScope(scope: SpanScope): void {
    this.#scopeClosing(scope);
  }

  closeResource(resource: SpanResource): void {
    this.#byte(0x5d);
    this.#resourceClosing(resource);
  }

  closeRequest(): void {
    this.#ascii(']}');
  }

  body(): Buffer {
    return this.#buffers.lendToKeep(this.#buffer, 0, this.position);
  }

  openSpan(
    traceId: string,
    spanId: string,
    traceState: string,
    parentSpanId: string,
    flags: number,
    name: string,
    kind: number,
    start: HrTime,
    end: HrTime,
  ): number {
    this.#copy(TRACE_ID);
    this.#string(traceId);
    this.#copy(SPAN_ID);
    this.#string(spanId);
    if (traceState !== '') {
      this.#ascii(',"traceState":');
      this.#string(traceState);
    }
    if (parentSpanId !== '') {
      this.#copy(PARENT_SPAN_ID);
      this.#string(parentSpanId);
    }
    this.#copy(FLAGS);
    this.#integer(flags);
    this.#name(name);
    this.#copy(KIND);
    this.#integer(kind);
    this.#time(this.#startTime, start);
    this.#time(this.#endTime, end);
    return 0;
  }

  spanAttributes(attributes: Attributes): void {
    this.#attributes(ATTRIBUTES, attributes, true);
  }

  droppedAttributes(count: number): void {
    this.#count(',"droppedAttributesCount":', count);
  }

  openEvents(): void {
    this.#copy(EVENTS);
  }

  event(
    index: number,
    time: HrTime,
    name: string,
    attributes: Attributes | undefined,
    droppedAttributes: number,
  ): void {
    if (index > 0) this.#byte(COMMA);
    this.#time(this.#eventTime, time);
    this.#name(name);
    if (attributes !== undefined) this.#attributes(ATTRIBUTES, attributes, true);
    if (droppedAttributes > 0) this.#count(',"droppedAttributesCount":', droppedAttributes);
    this.#byte(0x7d);
  }

  closeEvents(): void {
    this.#byte(0x5d);
  }

  droppedEvents(count: number): void {
    this.#count(',"droppedEventsCount":', count);
  }

  openLinks(): void {
    this.#ascii(',"links":[');
  }

  openLink(index: number, traceId: string, spanId: string, traceState: string): number {
    if (index > 0) this.#byte(COMMA);
    this.#ascii('{"traceId":');
    this.#string(traceId);
    this.#ascii(',"spanId":');
    this.#string(spanId);
    if (traceState !== '') {
      this.#ascii(',"traceState":');
      this.#string(traceState);
    }
    return 0;
  }

  linkAttributes(attributes: Attributes): void {
    this.#attributes(ATTRIBUTES, attributes, true);
  }

  linkDroppedAttributes(count: number): void {
    this.#count(',"droppedAttributesCount":', count);
  }

  closeLink(_mark: number, flags: number): void {
    this.#ascii(',"flags":');
    this.#integer(flags);
    this.#byte(0x7d);
  }

  closeLinks(): void {
    this.#byte(0x5d);
  }

  droppedLinks(count: number): void {
    this.#count(',"droppedLinksCount":', count);
  }

  /** The status and the `}` closing the span. */
  closeSpan(_mark: number, code: number, message: string): void {
    this.#copy(STATUS);
    const hasMessage = message !== '';
    if (hasMessage) {
      this.#ascii('"message":');
      this.#string(message);
    }
    // `SpanStatusCode.UNSET` is 0: OTLP/JSON leaves a default value out.
    if (code !== 0) {
      if (hasMessage) this.#byte(COMMA);
      this.#copy(CODE);
      this.#integer(code);
    }
    this.#copy(CLOSE_TWO);
  }

  /** `prefix` and `count`. */
  #count(prefix: string, count: number): void {
    this.#ascii(prefix);
    this.#integer(count);
  }

  /** `{"resource":{…},"scopeSpans":[`. */
  #resourceOpening(resource: SpanResource): void {
    this.#ascii('{"resource":{');
    this.#attributes(RESOURCE_ATTRIBUTES, resource.attributes, false);
    this.#ascii('},"scopeSpans":[');
  }

  /** The resource's `schemaUrl`, if any, and the `}` closing its `ResourceSpans`. */
  #resourceClosing(resource: SpanResource): void {
    const schemaUrl = resource.schemaUrl;
    if (schemaUrl !== undefined && schemaUrl !== '') {
      this.#ascii(',"schemaUrl":');
      this.#string(schemaUrl);
    }
    this.#byte(0x7d);
  }

  /** `{"scope":{…},"spans":[`. */
  #scopeOpening(scope: SpanScope): void {
    this.#ascii('{"scope":{"name":');
    this.#string(scope.name);
    if (scope.version !== undefined && scope.version !== '') {
      this.#ascii(',"version":');
      this.#string(scope.version);
    }
    this.#ascii('},"spans":[');
  }

  /** The `]` closing the spans, the scope's `schemaUrl`, if any, and the `}` of `ScopeSpans`. */
  #scopeClosing(scope: SpanScope): void {
    this.#byte(0x5d);
    if (scope.schemaUrl !== undefined && scope.schemaUrl !== '') {
      this.#ascii(',"schemaUrl":');
      this.#string(scope.schemaUrl);
    }
    this.#byte(0x7d);
  }

  /**
   * `prefix` (`"attributes":[` after a comma or not), the attributes and `]`; with `optional`,
   * nothing at all when there are none. Values that are `undefined` or `null` are left out, as
   * the protobuf encoder does.
   */
  #attributes(prefix: Buffer, attributes: Attributes, optional: boolean): void {
    // Object.keys, not for-in: a span's attributes object is in dictionary mode (V8 turns an
    // object into one past about 20 keys added by name), which for-in walks at a third more.
    const keys = Object.keys(attributes);
    const start = this.position;
    this.#copy(prefix);
    let any = false;
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index]!;
      const value = attributes[key];
      if (value === undefined || value === null) continue;
      if (any) this.#byte(COMMA);
      any = true;
      const entry = this.#key(key);
      if (typeof value === 'string') {
        const pair = repeatedPair(entry, value, stringKeyValue);
        if (pair !== undefined) {
          this.#copy(pair);
          continue;
        }
        this.#copy(entry.bytes);
        this.#copy(STRING_VALUE);
        this.#string(value);
        this.#copy(CLOSE_TWO);
        continue;
      }
      if (typeof value === 'number') {
        if (!entry.double && Number.isInteger(value) && value >= INT64_MIN && value < INT64_MAX) {
          this.#copy(entry.intPrefix);
          this.#intDigits(value);
        } else {
          if (!entry.double) {
            entry.double = true;
            this.#numbers.isDouble(key, value);
          }
          this.#copy(entry.doublePrefix);
          this.#doubleDigits(value);
        }
        this.#byte(0x7d);
      } else {
        this.#copy(entry.bytes);
        if (!entry.double && Array.isArray(value)) {
          entry.double = this.#numbers.isDoubleArray(key, value);
        }
        this.#anyValue(value, entry.double);
      }
      this.#byte(0x7d);
    }
    if (!any && optional) {
      this.position = start;
      return;
    }
    this.#byte(0x5d);
  }

  /** The cache entry of an attribute key: `{"key":"…","value":`, escaped once per distinct key. */
  #key(key: string): EncodedKey {
    let entry = this.#keys.get(key);
    if (entry === undefined) {
      const bytes = `{"key":${JSON.stringify(key)},"value":`;
      entry = {
        bytes: Buffer.from(bytes, 'utf8'),
        intPrefix: Buffer.from(bytes + INT_VALUE, 'utf8'),
        doublePrefix: Buffer.from(bytes + DOUBLE_VALUE, 'utf8'),
        double: this.#numbers.isDoubleKey(key),
        text: undefined,
        pair: undefined,
      };
      if (this.#keys.size < MAX_CACHED_KEYS) this.#keys.set(key, entry);
    }
    return entry;
  }

  /** `,"name":` and a span or event name: few distinct ones, each escaped once and then copied. */
  #name(text: string): void {
    let bytes = this.#names.get(text);
    if (bytes === undefined) {
      if (this.#names.size >= MAX_CACHED_NAMES || text.length > MAX_CACHED_VALUE) {
        this.#copy(NAME);
        this.#string(text);
        return;
      }
      bytes = Buffer.from(`,"name":${JSON.stringify(text)}`, 'utf8');
      this.#names.set(text, bytes);
    }
    this.#copy(bytes);
  }

  /** Bytes encoded before; TypedArray#set is a V8 builtin, no trip into C++ as Buffer#copy. */
  #copy(bytes: Uint8Array): void {
    this.#ensure(bytes.length);
    this.#buffer.set(bytes, this.position);
    this.position += bytes.length;
  }

  /** `{"intValue":"…"}` for an integer within int64. */
  #intValue(value: number): void {
    this.#ascii(INT_VALUE);
    this.#intDigits(value);
    this.#byte(0x7d);
  }

  /** The digits of an `intValue` and its closing quote. */
  #intDigits(value: number): void {
    if (Number.isSafeInteger(value)) this.#integer(value);
    else this.#ascii(BigInt(value).toString());
    this.#byte(QUOTE);
  }

  /** `{"doubleValue":…}`; JSON has no NaN or Infinity, protobuf's JSON mapping spells them. */
  #doubleValue(value: number): void {
    this.#ascii(DOUBLE_VALUE);
    this.#doubleDigits(value);
    this.#byte(0x7d);
  }

  /** A double as JSON writes it, or the string protobuf's JSON mapping has for NaN and Infinity. */
  #doubleDigits(value: number): void {
    this.#ascii(Number.isFinite(value) ? String(value) : `"${String(value)}"`);
  }

  /** An `AnyValue` object; `double` says how numbers go out (see {@link NumberTypes}). */
  #anyValue(value: unknown, double: boolean): void {
    if (typeof value === 'string') {
      this.#ascii('{"stringValue":');
      this.#string(value);
      this.#byte(0x7d);
    } else if (typeof value === 'number') {
      if (!double && Number.isInteger(value) && value >= INT64_MIN && value < INT64_MAX) {
        this.#intValue(value);
      } else {
        this.#doubleValue(value);
      }
    } else if (typeof value === 'boolean') {
      this.#ascii(value ? '{"boolValue":true}' : '{"boolValue":false}');
    } else if (Array.isArray(value)) {
      this.#ascii('{"arrayValue":{');
      if (value.length > 0) {
        this.#ascii('"values":[');
        for (let index = 0; index < value.length; index += 1) {
          if (index > 0) this.#byte(COMMA);
          const item: unknown = value[index];
          if (item === undefined || item === null) this.#ascii('{}');
          else this.#anyValue(item, double);
        }
        this.#byte(0x5d);
      }
      this.#ascii('}}');
    } else if (value instanceof Uint8Array) {
      this.#ascii('{"bytesValue":"');
      this.#ascii(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'));
      this.#ascii('"}');
    } else {
      // Not an attribute value the API allows; the stock serializer writes an empty AnyValue.
      this.#ascii('{}');
    }
  }

  /** The field of `times`, the nanoseconds of `time` in decimal, and the closing quote. */
  #time(times: TimeField, time: HrTime): void {
    const seconds = Math.trunc(time[0]);
    const nanos = Math.trunc(time[1]);
    if (seconds > 0 && nanos >= 0 && nanos < 1e9 && Number.isSafeInteger(seconds)) {
      // seconds * 1e9 + nanos exceeds 2^53: the seconds, then nine digits of nanoseconds, two
      // at a time. The field name and the seconds are kept as bytes while the seconds repeat
      // (in a batch they do).
      if (seconds !== times.seconds) {
        times.seconds = seconds;
        times.bytes = Buffer.from(`${times.prefix}${seconds}`, 'latin1');
      }
      this.#copy(times.bytes);
      this.#ensure(10);
      const buffer = this.#buffer;
      const at = this.position;
      // Below 2^31: integer division.
      let rest = nanos % 1e8;
      buffer[at] = ZERO + ((nanos / 1e8) | 0);
      for (let pair = 7; pair >= 1; pair -= 2) {
        const next = (rest / 100) | 0;
        const twoDigits = (rest - next * 100) * 2;
        buffer[at + pair] = DIGIT_PAIRS[twoDigits]!;
        buffer[at + pair + 1] = DIGIT_PAIRS[twoDigits + 1]!;
        rest = next;
      }
      buffer[at + 9] = QUOTE;
      this.position = at + 10;
      return;
    }
    this.#ascii(times.prefix);
    this.#ensure(32);
    if (seconds === 0) {
      this.#integer(nanos);
    } else {
      // Before 1970 (which OTLP's unsigned times cannot carry anyway) or not normalized: exact
      // bigint arithmetic, as the stock serializer does.
      this.#ascii((BigInt(seconds) * 1_000_000_000n + BigInt(nanos)).toString());
    }
    this.#byte(QUOTE);
  }

  /** A safe integer in decimal, written digit by digit (no string made for it). */
  #integer(value: number): void {
    this.#ensure(17);
    if (value < 0) {
      this.#buffer[this.position++] = 0x2d;
      value = -value;
    }
    if (value < 10) {
      this.#buffer[this.position++] = ZERO + value;
      return;
    }
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
    const buffer = this.#buffer;
    let at = this.position + digits - 1;
    for (let rest = value; at >= this.position; rest = Math.floor(rest / 10)) {
      buffer[at--] = ZERO + (rest % 10);
    }
    this.position += digits;
  }

  /**
   * A JSON string. Printable ASCII without quote or backslash, the rule for ids, names and keys,
   * is copied byte by byte; anything else goes through `JSON.stringify`, which escapes control
   * characters and lone surrogates, and the UTF-8 encoder.
   */
  #string(text: string): void {
    const length = text.length;
    this.#ensure(2 + length * MAX_BYTES_PER_UNIT);
    const buffer = this.#buffer;
    const start = this.position;
    buffer[start] = QUOTE;
    let index = 0;
    for (; index < length; index += 1) {
      const code = text.charCodeAt(index);
      if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) break;
      buffer[start + 1 + index] = code;
    }
    if (index === length) {
      buffer[start + 1 + length] = QUOTE;
      this.position = start + 2 + length;
      return;
    }
    this.position = start + buffer.write(JSON.stringify(text), start, 'utf8');
  }

  /** Text known to be ASCII that needs no escaping (the encoder's own syntax, digits). */
  #ascii(text: string): void {
    const length = text.length;
    this.#ensure(length);
    const buffer = this.#buffer;
    const start = this.position;
    for (let index = 0; index < length; index += 1) buffer[start + index] = text.charCodeAt(index);
    this.position = start + length;
  }

  #byte(value: number): void {
    this.#ensure(1);
    this.#buffer[this.position++] = value;
  }

  #ensure(bytes: number): void {
    const needed = this.position + bytes;
    if (needed <= this.#buffer.length) return;
    this.#buffer = this.#buffers.grow(this.#buffer, this.position, needed);
  }
}

/**
 * An attribute key as written (`bytes`: `{"key":"…","value":`), the same followed by the opening
 * of an int and a double, whether its numbers are doubles (see {@link NumberTypes}), and its
 * last string value ({@link repeatedPair}).
 */
interface EncodedKey extends RepeatedValue {
  readonly intPrefix: Buffer;
  readonly doublePrefix: Buffer;
  double: boolean;
}

/** A whole JSON `KeyValue` for a string value, after `key`'s `{"key":"…","value":`. */
function stringKeyValue(key: Buffer, value: string): Buffer {
  return Buffer.from(`${key.toString('utf8')}{"stringValue":${JSON.stringify(value)}}}`, 'utf8');
}

/** A time field: its name, and the bytes of it with the seconds of the last time written. */
interface TimeField {
  readonly prefix: string;
  seconds: number;
  bytes: Buffer;
}

function timeField(prefix: string): TimeField {
  return { prefix, seconds: Number.NaN, bytes: Buffer.alloc(0) };
}
