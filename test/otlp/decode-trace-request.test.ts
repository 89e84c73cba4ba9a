import protobufjs from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { TooltraceError } from '../../src/errors/index.js';
import { decodeTraceRequest, OtlpDecodeError } from '../../src/otlp/index.js';
import { otlpProtoTypes } from './otlp-proto-schema.js';

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const SPAN_ID = 'eee19b7ec3c1b174';
const PARENT_ID = 'eee19b7ec3c1b173';

function json(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

function protobuf(request: Record<string, unknown>): Uint8Array {
  const type = otlpProtoTypes().exportTraceServiceRequest;
  return type.encode(type.fromObject(request)).finish();
}

/** One OTLP message of type `typeName` (`Span`, `Resource`, …) encoded on its own. */
function encoded(typeName: string, value: Record<string, unknown>): Uint8Array {
  const type = otlpProtoTypes().exportTraceServiceRequest.root.lookupType(
    `opentelemetry.proto.${typeName}`,
  );
  return type.encode(type.fromObject(value)).finish();
}

/** Field `field` holding `contents` as one length-delimited value: tag, length, bytes. */
function lengthDelimited(field: number, ...contents: Uint8Array[]): Uint8Array {
  return protobufjs.Writer.create()
    .uint32((field << 3) | 2)
    .bytes(Buffer.concat(contents))
    .finish();
}

function bytesOfHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** One span in one scope in one resource, as OTLP/JSON writes it. */
function jsonRequest(span: Record<string, unknown>): Record<string, unknown> {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
        scopeSpans: [{ scope: { name: 'scope', version: '1' }, spans: [span] }],
      },
    ],
  };
}

describe('decodeTraceRequest()', () => {
  describe('OTLP/JSON', () => {
    it('decodes hex ids, string times, integer enums and every AnyValue type', () => {
      const [span] = decodeTraceRequest(
        json(
          jsonRequest({
            traceId: TRACE_ID.toUpperCase(),
            spanId: SPAN_ID,
            parentSpanId: PARENT_ID,
            name: 'span',
            kind: 2,
            startTimeUnixNano: '1700000000123456789',
            endTimeUnixNano: '1700000001000000001',
            attributes: [
              { key: 'string', value: { stringValue: 'text' } },
              { key: 'int', value: { intValue: '42' } },
              { key: 'int.number', value: { intValue: -5 } },
              { key: 'int.big', value: { intValue: '9007199254740993' } },
              { key: 'int.min', value: { intValue: '-9223372036854775808' } },
              { key: 'double', value: { doubleValue: 2.5 } },
              { key: 'double.nan', value: { doubleValue: 'NaN' } },
              { key: 'double.infinity', value: { doubleValue: '-Infinity' } },
              { key: 'bool', value: { boolValue: false } },
              { key: 'bytes', value: { bytesValue: 'AQID' } },
              {
                key: 'array',
                value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }, {}] } },
              },
              {
                key: 'kvlist',
                value: {
                  kvlistValue: {
                    values: [
                      { key: 'nested', value: { kvlistValue: { values: [] } } },
                      { key: 'list', value: { arrayValue: {} } },
                    ],
                  },
                },
              },
              { key: 'empty', value: {} },
              { key: 'absent' },
            ],
            events: [
              {
                timeUnixNano: 1700000000500000000,
                name: 'event',
                attributes: [{ key: 'k', value: { stringValue: 'v' } }],
              },
            ],
            links: [{ traceId: TRACE_ID, spanId: PARENT_ID }],
            status: { code: 2, message: 'failed' },
            droppedAttributesCount: 3,
            droppedEventsCount: '4',
            flags: 257,
            traceState: 'vendor=value',
          }),
        ),
        'application/json',
      );
      expect(span).toEqual({
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        parentSpanId: PARENT_ID,
        traceState: 'vendor=value',
        flags: 257,
        name: 'span',
        kind: 2,
        startTimeUnixNano: 1_700_000_000_123_456_789n,
        endTimeUnixNano: 1_700_000_001_000_000_001n,
        attributes: {
          string: 'text',
          int: 42,
          'int.number': -5,
          'int.big': 9_007_199_254_740_993n,
          'int.min': -9_223_372_036_854_775_808n,
          double: 2.5,
          'double.nan': Number.NaN,
          'double.infinity': Number.NEGATIVE_INFINITY,
          bool: false,
          bytes: new Uint8Array([1, 2, 3]),
          array: ['a', 1, undefined],
          kvlist: { nested: {}, list: [] },
          empty: undefined,
          absent: undefined,
        },
        events: [
          { name: 'event', timeUnixNano: 1_700_000_000_500_000_000n, attributes: { k: 'v' } },
        ],
        links: [{ traceId: TRACE_ID, spanId: PARENT_ID, attributes: {} }],
        status: { code: 2, message: 'failed' },
        droppedAttributesCount: 3,
        droppedEventsCount: 4,
        droppedLinksCount: 0,
        resource: { 'service.name': 'svc' },
        scope: { name: 'scope', version: '1' },
        encoding: 'json',
      });
      expect(Object.keys(span!.attributes)).toContain('absent');
    });

    it('fills defaults for absent fields: empty ids, zero times, kind and status unset', () => {
      const [span] = decodeTraceRequest(json(jsonRequest({})), 'json');
      expect(span).toMatchObject({
        traceId: '',
        spanId: '',
        parentSpanId: '',
        name: '',
        kind: 0,
        startTimeUnixNano: 0n,
        endTimeUnixNano: 0n,
        attributes: {},
        events: [],
        links: [],
        status: { code: 0, message: '' },
      });
    });

    it('accepts snake_case keys, enum names and base64 ids', () => {
      const [span] = decodeTraceRequest(
        json({
          resource_spans: [
            {
              scope_spans: [
                {
                  spans: [
                    {
                      trace_id: Buffer.from(TRACE_ID, 'hex').toString('base64'),
                      span_id: SPAN_ID,
                      parent_span_id: '',
                      kind: 'SPAN_KIND_CONSUMER',
                      start_time_unix_nano: 12,
                      status: { code: 'STATUS_CODE_OK' },
                      attributes: [{ key: 'k', value: { string_value: 'v' } }],
                    },
                  ],
                },
              ],
            },
          ],
        }),
        'application/json',
      );
      expect(span).toMatchObject({
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        parentSpanId: '',
        kind: 5,
        startTimeUnixNano: 12n,
        status: { code: 1, message: '' },
        attributes: { k: 'v' },
        scope: { name: '', version: '' },
        resource: {},
      });
    });

    it('decodes several resources and scopes in document order', () => {
      const spans = decodeTraceRequest(
        json({
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'a' } }] },
              scopeSpans: [
                { scope: { name: 'one' }, spans: [{ name: '1' }, { name: '2' }] },
                { scope: { name: 'two' }, spans: [{ name: '3' }] },
              ],
            },
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'b' } }] },
              scopeSpans: [{ spans: [{ name: '4' }] }],
            },
          ],
        }),
        'application/json',
      );
      expect(
        spans.map((span) => [span.name, span.scope.name, span.resource['service.name']]),
      ).toEqual([
        ['1', 'one', 'a'],
        ['2', 'one', 'a'],
        ['3', 'two', 'a'],
        ['4', '', 'b'],
      ]);
    });

    it.each([
      ['not JSON', '{', /^malformed JSON/],
      ['not an object', '[1]', /^expected a JSON object, got an array/],
      ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), /^malformed JSON/],
      [
        'spans that are not an array',
        JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: {} }] }] }),
        /^resourceSpans\[0\]\.scopeSpans\[0\]\.spans: expected an array, got an object/,
      ],
      [
        'a span id of the wrong length',
        JSON.stringify(jsonRequest({ spanId: TRACE_ID })),
        /spans\[0\]\.spanId: expected 16 hex characters \(8 bytes\)/,
      ],
      [
        'a time that is not an integer',
        JSON.stringify(jsonRequest({ startTimeUnixNano: '12.5' })),
        /spans\[0\]\.startTimeUnixNano: expected an unsigned 64-bit integer/,
      ],
      [
        'a negative time',
        JSON.stringify(jsonRequest({ endTimeUnixNano: '-1' })),
        /spans\[0\]\.endTimeUnixNano/,
      ],
      [
        'a name that is not a string',
        JSON.stringify(jsonRequest({ name: 7 })),
        /spans\[0\]\.name: expected a string, got 7/,
      ],
      [
        'an unknown enum name',
        JSON.stringify(jsonRequest({ kind: 'SIDEWAYS' })),
        /spans\[0\]\.kind: expected an enum number, got "SIDEWAYS"/,
      ],
      [
        'an int attribute that is not an integer',
        JSON.stringify(jsonRequest({ attributes: [{ key: 'k', value: { intValue: '1.5' } }] })),
        /spans\[0\]\.attributes\[0\]\.value\.intValue: expected a 64-bit integer/,
      ],
      [
        'an int attribute above int64, as a Collector refuses it',
        JSON.stringify(
          jsonRequest({ attributes: [{ key: 'k', value: { intValue: '9223372036854775808' } }] }),
        ),
        /attributes\[0\]\.value\.intValue: expected a 64-bit integer/,
      ],
      [
        'an int attribute below int64',
        JSON.stringify(jsonRequest({ attributes: [{ key: 'k', value: { intValue: -1e19 } }] })),
        /attributes\[0\]\.value\.intValue: expected a 64-bit integer/,
      ],
      [
        'a bool attribute given as a string',
        JSON.stringify(jsonRequest({ attributes: [{ key: 'k', value: { boolValue: 'yes' } }] })),
        /attributes\[0\]\.value\.boolValue: expected a boolean/,
      ],
    ])('throws an OtlpDecodeError naming the field for %s', (_, body, message) => {
      const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
      expect(() => decodeTraceRequest(bytes, 'application/json')).toThrow(OtlpDecodeError);
      expect(() => decodeTraceRequest(bytes, 'application/json')).toThrow(message);
    });
  });

  describe('protobuf', () => {
    it('decodes a body encoded with the opentelemetry-proto field numbers', () => {
      const [span] = decodeTraceRequest(
        protobuf({
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
              scopeSpans: [
                {
                  scope: { name: 'scope', version: '2' },
                  spans: [
                    {
                      traceId: bytesOfHex(TRACE_ID),
                      spanId: bytesOfHex(SPAN_ID),
                      parentSpanId: bytesOfHex(PARENT_ID),
                      name: 'span',
                      kind: 3,
                      startTimeUnixNano: '1700000000123456789',
                      endTimeUnixNano: '18446744073709551615',
                      attributes: [
                        { key: 'int.big', value: { intValue: '-9007199254740993' } },
                        { key: 'int', value: { intValue: 7 } },
                        { key: 'zero', value: { intValue: 0 } },
                        { key: 'bytes', value: { bytesValue: new Uint8Array([9, 8]) } },
                        { key: 'empty.string', value: { stringValue: '' } },
                        { key: 'false', value: { boolValue: false } },
                        { key: 'double', value: { doubleValue: 0 } },
                        {
                          key: 'kvlist',
                          value: {
                            kvlistValue: {
                              values: [
                                {
                                  key: 'a',
                                  value: { arrayValue: { values: [{ boolValue: true }] } },
                                },
                              ],
                            },
                          },
                        },
                        { key: 'empty', value: {} },
                      ],
                      events: [{ name: 'e', timeUnixNano: '1700000000200000000' }],
                      links: [
                        {
                          traceId: bytesOfHex(TRACE_ID),
                          spanId: bytesOfHex(SPAN_ID),
                          attributes: [{ key: 'l', value: { stringValue: 'v' } }],
                        },
                      ],
                      status: { code: 2, message: 'bad' },
                      droppedLinksCount: 5,
                      flags: 0x301,
                    },
                  ],
                },
              ],
            },
          ],
        }),
        'application/x-protobuf',
      );
      expect(span).toEqual({
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        parentSpanId: PARENT_ID,
        traceState: '',
        flags: 0x301,
        name: 'span',
        kind: 3,
        startTimeUnixNano: 1_700_000_000_123_456_789n,
        endTimeUnixNano: 18_446_744_073_709_551_615n,
        attributes: {
          'int.big': -9_007_199_254_740_993n,
          int: 7,
          zero: 0,
          bytes: new Uint8Array([9, 8]),
          'empty.string': '',
          false: false,
          double: 0,
          kvlist: { a: [true] },
          empty: undefined,
        },
        events: [{ name: 'e', timeUnixNano: 1_700_000_000_200_000_000n, attributes: {} }],
        links: [{ traceId: TRACE_ID, spanId: SPAN_ID, attributes: { l: 'v' } }],
        status: { code: 2, message: 'bad' },
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 5,
        resource: { 'service.name': 'svc' },
        scope: { name: 'scope', version: '2' },
        encoding: 'protobuf',
      });
    });

    it('reads a resource and a scope that follow their spans', () => {
      const span = encoded('Span', { name: 'early', spanId: bytesOfHex(SPAN_ID) });
      const scope = encoded('InstrumentationScope', { name: 'late-scope', version: '9' });
      const resource = encoded('Resource', {
        attributes: [{ key: 'service.name', value: { stringValue: 'late' } }],
      });
      const body = lengthDelimited(
        1,
        lengthDelimited(2, lengthDelimited(2, span), lengthDelimited(1, scope)),
        lengthDelimited(1, resource),
      );
      expect(decodeTraceRequest(body, 'protobuf')).toEqual([
        expect.objectContaining({
          name: 'early',
          spanId: SPAN_ID,
          scope: { name: 'late-scope', version: '9' },
          resource: { 'service.name': 'late' },
        }) as unknown,
      ]);
    });

    it('skips unknown fields and known fields of an unexpected wire type', () => {
      const span = Buffer.concat([
        encoded('Span', { name: 'kept', kind: 2 }),
        protobufjs.Writer.create()
          .uint32((99 << 3) | 0)
          .uint32(7)
          .uint32((100 << 3) | 2)
          .string('unknown')
          .uint32((5 << 3) | 0)
          .uint32(1)
          .finish(),
      ]);
      const body = lengthDelimited(1, lengthDelimited(2, lengthDelimited(2, span)));
      expect(decodeTraceRequest(body, 'protobuf')).toEqual([
        expect.objectContaining({ name: 'kept', kind: 2 }) as unknown,
      ]);
    });

    it('throws an OtlpDecodeError for a length that runs past its message', () => {
      const body = lengthDelimited(1, new Uint8Array([0x12, 0x05, 0x00]));
      expect(() => decodeTraceRequest(body, 'protobuf')).toThrow(OtlpDecodeError);
      expect(() => decodeTraceRequest(body, 'protobuf')).toThrow(
        /^malformed protobuf ExportTraceServiceRequest: .*runs past its message/,
      );
    });

    it('decodes thousands of distinct attribute keys and values right', () => {
      const attributes = Array.from({ length: 6000 }, (_, index) => ({
        key: `key.${index}`,
        value: { stringValue: `value ${index % 100}` },
      }));
      const [span] = decodeTraceRequest(
        protobuf({ resourceSpans: [{ scopeSpans: [{ spans: [{ attributes }] }] }] }),
        'protobuf',
      );
      expect(span!.attributes).toEqual(
        Object.fromEntries(attributes.map(({ key, value }) => [key, value.stringValue])),
      );
    });

    it('decodes an empty body as a request without spans', () => {
      expect(decodeTraceRequest(new Uint8Array(0), 'application/x-protobuf')).toEqual([]);
    });

    it('throws an OtlpDecodeError for a truncated body', () => {
      const body = protobuf({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'cut' }] }] }] });
      expect(() => decodeTraceRequest(body.subarray(0, body.length - 2), 'protobuf')).toThrow(
        /^malformed protobuf ExportTraceServiceRequest/,
      );
    });
  });

  it.each(['protobuf', 'json'] as const)(
    'keeps a `__proto__` attribute as an own property in %s',
    (encoding) => {
      const request = jsonRequest({
        attributes: [{ key: '__proto__', value: { stringValue: 'polluted' } }],
      });
      const body = encoding === 'json' ? json(request) : protobuf(request);
      const [span] = decodeTraceRequest(body, encoding);
      expect(Object.getPrototypeOf(span!.attributes)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(span!.attributes, '__proto__')?.value).toBe(
        'polluted',
      );
    },
  );

  it('throws a TooltraceError with the field path in `where`', () => {
    const body = json(jsonRequest({ kind: true }));
    const error = (() => {
      try {
        decodeTraceRequest(body, 'application/json');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(TooltraceError);
    expect(error).toMatchObject({
      name: 'OtlpDecodeError',
      where: 'resourceSpans[0].scopeSpans[0].spans[0].kind',
    });
  });

  it('throws for a content type that is neither protobuf nor JSON', () => {
    expect(() => decodeTraceRequest(new Uint8Array(0), 'text/plain')).toThrow(
      'unsupported content type "text/plain"',
    );
  });
});
