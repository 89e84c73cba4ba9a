import { SpanStatusCode, type Attributes, type HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { groupByResourceAndScope } from './group-spans.js';
import { NumberTypes } from './number-types.js';
import { RequestBuffers } from './request-buffers.js';

/** OTLP span flags: the low byte is the W3C trace flags; these say whether the parent is remote. */
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;
const INT64_MIN = -(2 ** 63);
const INT64_MAX = 2 ** 63;
/** Encoded attribute keys kept at most (keys are few and repeat in every span). */
const MAX_CACHED_KEYS = 4096;
/** What an encoder holds between requests: its buffer is taken per request. */
const EMPTY = Buffer.alloc(0);
/** Worst case of one UTF-16 unit in a JSON string: `\u001f` is six bytes. */
const MAX_BYTES_PER_UNIT = 6;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const COMMA = 0x2c;

/**
 * Encodes spans as an OTLP/JSON `ExportTraceServiceRequest` in one pass over one growing buffer,
 * following the OTLP JSON mapping: lowerCamelCase keys, trace and span ids as hex, 64-bit
 * integers (times, `intValue`) as decimal strings, enums as numbers, fields at their default
 * value (zero counts, empty lists and strings) left out. It writes the same messages as the
 * stock `JsonTraceSerializer` (which builds an object tree and then `JSON.stringify`s it) and as
 * {@link OtlpTraceEncoder} in protobuf: spans grouped by resource and instrumentation scope, a
 * number as `intValue` or `doubleValue` by the same one-type-per-key rule ({@link NumberTypes}),
 * NaN and the infinities as the strings protobuf's JSON mapping uses. Every attribute key is
 * escaped once and then copied, and its number type rides on that cache. Reuse one encoder: its
 * buffer and key cache are kept.
 */
export class OtlpJsonTraceEncoder {
  readonly #buffers = new RequestBuffers(1024 * 1024);
  #buffer: Buffer = EMPTY;
  #position = 0;
  readonly #keys = new Map<string, EncodedKey>();
  readonly #numbers: NumberTypes;

  /** `numbers` decides int or double per key; share one with other encoders of the same stream. */
  constructor(numbers: NumberTypes = new NumberTypes()) {
    this.#numbers = numbers;
  }

  /**
   * The request body for `spans`, which the caller owns: the encoder writes the next into other
   * memory. {@link release} it once sent, for its memory to be reused.
   */
  encode(spans: readonly ReadableSpan[]): Buffer {
    this.#buffer = this.#buffers.take();
    this.#position = 0;
    const resources = groupByResourceAndScope(spans);
    this.#ascii('{"resourceSpans":[');
    let firstResource = true;
    for (const scopes of resources.values()) {
      if (!firstResource) this.#byte(COMMA);
      firstResource = false;
      const first = scopes.values().next().value![0]!;
      this.#ascii('{"resource":{');
      this.#attributes('"attributes":', first.resource.attributes, false);
      this.#ascii('},"scopeSpans":[');
      let firstScope = true;
      for (const scoped of scopes.values()) {
        if (!firstScope) this.#byte(COMMA);
        firstScope = false;
        const scope = scoped[0]!.instrumentationScope;
        this.#ascii('{"scope":{"name":');
        this.#string(scope.name);
        if (scope.version !== undefined && scope.version !== '') {
          this.#ascii(',"version":');
          this.#string(scope.version);
        }
        this.#ascii('},"spans":[');
        for (let index = 0; index < scoped.length; index += 1) {
          if (index > 0) this.#byte(COMMA);
          this.#span(scoped[index]!);
        }
        this.#byte(0x5d);
        if (scope.schemaUrl !== undefined && scope.schemaUrl !== '') {
          this.#ascii(',"schemaUrl":');
          this.#string(scope.schemaUrl);
        }
        this.#byte(0x7d);
      }
      this.#byte(0x5d);
      const schemaUrl = first.resource.schemaUrl;
      if (schemaUrl !== undefined && schemaUrl !== '') {
        this.#ascii(',"schemaUrl":');
        this.#string(schemaUrl);
      }
      this.#byte(0x7d);
    }
    this.#ascii(']}');
    return this.#buffers.lend(this.#buffer, this.#position);
  }

  /** Takes back a body {@link encode} returned, once nothing reads it any more (it was sent). */
  release(body: Uint8Array): void {
    this.#buffers.give(body);
  }

  #span(span: ReadableSpan): void {
    const context = span.spanContext();
    this.#ascii('{"traceId":');
    this.#string(context.traceId);
    this.#ascii(',"spanId":');
    this.#string(context.spanId);
    const traceState = context.traceState?.serialize();
    if (traceState !== undefined && traceState !== '') {
      this.#ascii(',"traceState":');
      this.#string(traceState);
    }
    const parent = span.parentSpanContext;
    if (parent?.spanId !== undefined && parent.spanId !== '') {
      this.#ascii(',"parentSpanId":');
      this.#string(parent.spanId);
    }
    this.#ascii(',"flags":');
    this.#integer(flags(context.traceFlags, parent?.isRemote));
    this.#ascii(',"name":');
    this.#string(span.name);
    this.#ascii(',"kind":');
    this.#integer(span.kind + 1);
    this.#time(',"startTimeUnixNano":"', span.startTime);
    this.#time(',"endTimeUnixNano":"', span.endTime);
    this.#attributes(',"attributes":', span.attributes, true);
    this.#count(',"droppedAttributesCount":', span.droppedAttributesCount);
    const events = span.events;
    if (events.length > 0) {
      this.#ascii(',"events":[');
      for (let index = 0; index < events.length; index += 1) {
        const event = events[index]!;
        if (index > 0) this.#byte(COMMA);
        this.#time('{"timeUnixNano":"', event.time);
        this.#ascii(',"name":');
        this.#string(event.name);
        if (event.attributes !== undefined) {
          this.#attributes(',"attributes":', event.attributes, true);
        }
        this.#count(',"droppedAttributesCount":', event.droppedAttributesCount ?? 0);
        this.#byte(0x7d);
      }
      this.#byte(0x5d);
    }
    this.#count(',"droppedEventsCount":', span.droppedEventsCount);
    const links = span.links;
    if (links.length > 0) {
      this.#ascii(',"links":[');
      for (let index = 0; index < links.length; index += 1) {
        const link = links[index]!;
        if (index > 0) this.#byte(COMMA);
        this.#ascii('{"traceId":');
        this.#string(link.context.traceId);
        this.#ascii(',"spanId":');
        this.#string(link.context.spanId);
        const linkState = link.context.traceState?.serialize();
        if (linkState !== undefined && linkState !== '') {
          this.#ascii(',"traceState":');
          this.#string(linkState);
        }
        if (link.attributes !== undefined) {
          this.#attributes(',"attributes":', link.attributes, true);
        }
        this.#count(',"droppedAttributesCount":', link.droppedAttributesCount ?? 0);
        this.#ascii(',"flags":');
        this.#integer(flags(link.context.traceFlags, link.context.isRemote));
        this.#byte(0x7d);
      }
      this.#byte(0x5d);
    }
    this.#count(',"droppedLinksCount":', span.droppedLinksCount);
    this.#ascii(',"status":{');
    const message = span.status.message;
    const hasMessage = message !== undefined && message !== '';
    if (hasMessage) {
      this.#ascii('"message":');
      this.#string(message);
    }
    if (span.status.code !== SpanStatusCode.UNSET) {
      if (hasMessage) this.#byte(COMMA);
      this.#ascii('"code":');
      this.#integer(span.status.code);
    }
    this.#ascii('}}');
  }

  /**
   * `"attributes":[…]` after `prefix`; with `optional`, nothing at all when there are none. Values
   * that are `undefined` or `null` are left out, as the protobuf encoder does.
   */
  #attributes(prefix: string, attributes: Attributes, optional: boolean): void {
    const start = this.#position;
    this.#ascii(prefix);
    this.#byte(0x5b);
    let any = false;
    for (const key in attributes) {
      const value = attributes[key];
      if (value === undefined || value === null) continue;
      if (any) this.#byte(COMMA);
      any = true;
      const entry = this.#key(key);
      if (typeof value === 'number') {
        if (!entry.double && Number.isInteger(value) && value >= INT64_MIN && value < INT64_MAX) {
          this.#intValue(value);
        } else {
          entry.double = true;
          this.#numbers.isDouble(key, value);
          this.#doubleValue(value);
        }
      } else {
        if (!entry.double && Array.isArray(value)) {
          entry.double = this.#numbers.isDoubleArray(key, value);
        }
        this.#anyValue(value, entry.double);
      }
      this.#byte(0x7d);
    }
    if (!any && optional) {
      this.#position = start;
      return;
    }
    this.#byte(0x5d);
  }

  /** `{"key":"…","value":`, escaped once per distinct key; returns the key's cache entry. */
  #key(key: string): EncodedKey {
    let entry = this.#keys.get(key);
    if (entry === undefined) {
      entry = {
        bytes: Buffer.from(`{"key":${JSON.stringify(key)},"value":`, 'utf8'),
        double: this.#numbers.isDoubleKey(key),
      };
      if (this.#keys.size < MAX_CACHED_KEYS) this.#keys.set(key, entry);
    }
    const encoded = entry.bytes;
    this.#ensure(encoded.length);
    this.#buffer.set(encoded, this.#position);
    this.#position += encoded.length;
    return entry;
  }

  /** `{"intValue":"…"}` for an integer within int64. */
  #intValue(value: number): void {
    this.#ascii('{"intValue":"');
    if (Number.isSafeInteger(value)) this.#integer(value);
    else this.#ascii(BigInt(value).toString());
    this.#ascii('"}');
  }

  /** `{"doubleValue":…}`; JSON has no NaN or Infinity, protobuf's JSON mapping spells them. */
  #doubleValue(value: number): void {
    this.#ascii('{"doubleValue":');
    this.#ascii(Number.isFinite(value) ? String(value) : `"${String(value)}"`);
    this.#byte(0x7d);
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

  /** `prefix` and `count` when `count` is not zero (OTLP/JSON leaves defaults out). */
  #count(prefix: string, count: number): void {
    if (count === 0) return;
    this.#ascii(prefix);
    this.#integer(count);
  }

  /** `prefix`, the nanoseconds of `time` in decimal, and the closing quote. */
  #time(prefix: string, time: HrTime): void {
    this.#ascii(prefix);
    const seconds = Math.trunc(time[0]);
    const nanos = Math.trunc(time[1]);
    this.#ensure(32);
    if (seconds === 0) {
      this.#integer(nanos);
    } else if (seconds < 0 || nanos < 0 || nanos >= 1e9 || !Number.isSafeInteger(seconds)) {
      // Before 1970 (which OTLP's unsigned times cannot carry anyway) or not normalized: exact
      // bigint arithmetic, as the stock serializer does.
      this.#ascii((BigInt(seconds) * 1_000_000_000n + BigInt(nanos)).toString());
    } else {
      // seconds * 1e9 + nanos exceeds 2^53: the seconds, then nine digits of nanoseconds.
      this.#integer(seconds);
      const buffer = this.#buffer;
      let at = this.#position + 8;
      let rest = nanos;
      for (let digit = 0; digit < 9; digit += 1) {
        buffer[at--] = ZERO + (rest % 10);
        rest = Math.floor(rest / 10);
      }
      this.#position += 9;
    }
    this.#byte(QUOTE);
  }

  /** A safe integer in decimal, written digit by digit (no string made for it). */
  #integer(value: number): void {
    this.#ensure(17);
    if (value < 0) {
      this.#buffer[this.#position++] = 0x2d;
      value = -value;
    }
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
    const buffer = this.#buffer;
    let at = this.#position + digits - 1;
    for (let rest = value; at >= this.#position; rest = Math.floor(rest / 10)) {
      buffer[at--] = ZERO + (rest % 10);
    }
    this.#position += digits;
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
    const start = this.#position;
    buffer[start] = QUOTE;
    let index = 0;
    for (; index < length; index += 1) {
      const code = text.charCodeAt(index);
      if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) break;
      buffer[start + 1 + index] = code;
    }
    if (index === length) {
      buffer[start + 1 + length] = QUOTE;
      this.#position = start + 2 + length;
      return;
    }
    this.#position = start + buffer.write(JSON.stringify(text), start, 'utf8');
  }

  /** Text known to be ASCII that needs no escaping (the encoder's own syntax, digits). */
  #ascii(text: string): void {
    const length = text.length;
    this.#ensure(length);
    const buffer = this.#buffer;
    const start = this.#position;
    for (let index = 0; index < length; index += 1) buffer[start + index] = text.charCodeAt(index);
    this.#position = start + length;
  }

  #byte(value: number): void {
    this.#ensure(1);
    this.#buffer[this.#position++] = value;
  }

  #ensure(bytes: number): void {
    const needed = this.#position + bytes;
    if (needed <= this.#buffer.length) return;
    this.#buffer = this.#buffers.grow(this.#buffer, this.#position, needed);
  }
}

/** An attribute key as written, and whether its numbers are doubles (see {@link NumberTypes}). */
interface EncodedKey {
  readonly bytes: Buffer;
  double: boolean;
}

function flags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | FLAG_HAS_IS_REMOTE | (isRemote === true ? FLAG_IS_REMOTE : 0);
}
