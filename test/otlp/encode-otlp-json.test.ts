import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, encodeOtlpJson, type ReceivedSpan } from '../../src/otlp/index.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

function span(overrides: Partial<ReceivedSpan> = {}): ReceivedSpan {
  return {
    traceId: TRACE_ID,
    spanId: 'b7ad6b7169203331',
    parentSpanId: '',
    traceState: '',
    flags: 0,
    name: 'execute_tool read_file',
    kind: 1,
    startTimeUnixNano: 1_767_225_600_000_000_000n,
    endTimeUnixNano: 1_767_225_600_250_000_123n,
    attributes: {},
    events: [],
    links: [],
    status: { code: 0, message: '' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    resource: { 'service.name': 'tooltrace-test' },
    scope: { name: 'tooltrace', version: '0.1.0' },
    encoding: 'json',
    ...overrides,
  };
}

function roundTrip(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  return decodeTraceRequest(Buffer.from(encodeOtlpJson(spans)), 'application/json');
}

describe('encodeOtlpJson()', () => {
  it('writes one OTLP/JSON request on one line', () => {
    const text = encodeOtlpJson([span()]);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd()).not.toContain('\n');
    expect(JSON.parse(text)).toHaveProperty('resourceSpans');
  });

  it('round-trips attributes of every type through decodeTraceRequest', () => {
    const attributes = {
      string: 'text with "quotes" and ünïcode',
      empty: '',
      true: true,
      false: false,
      integer: 42,
      negative: -7,
      zero: 0,
      double: 0.25,
      bigint: 9_007_199_254_740_993n,
      negativeBigint: -9_223_372_036_854_775_808n,
      bytes: new Uint8Array([0, 1, 2, 254, 255]),
      strings: ['a', 'b'],
      mixed: ['a', 1, 2.5, true, 1_234_567_890_123_456_789n],
      emptyArray: [],
      nested: { level: 1, inner: { list: [{ deep: 'yes' }], bytes: new Uint8Array([7]) } },
      emptyObject: {},
    };
    const [decoded] = roundTrip([span({ attributes })]);
    expect(decoded?.attributes).toEqual(attributes);
    expect(typeof decoded?.attributes.bigint).toBe('bigint');
    expect(decoded?.attributes.bytes).toBeInstanceOf(Uint8Array);
  });

  it('keeps whole doubles beyond 2^53 and non-finite doubles as numbers', () => {
    const attributes = {
      huge: 1e21,
      unsafe: 2 ** 60,
      nan: Number.NaN,
      infinity: Number.POSITIVE_INFINITY,
      negativeInfinity: Number.NEGATIVE_INFINITY,
    };
    const [decoded] = roundTrip([span({ attributes })]);
    expect(decoded?.attributes).toEqual(attributes);
  });

  it('round-trips ids, times, status, events, links, counts, resource and scope', () => {
    const original = span({
      parentSpanId: '00f067aa0ba902b7',
      traceState: 'vendor=value',
      flags: 0x101,
      kind: 3,
      status: { code: 2, message: 'price feed returned HTTP 503' },
      attributes: { 'gen_ai.tool.name': 'fetch_prices', 'tooltrace.stream.partial.count': 3 },
      events: [
        {
          name: 'tooltrace.stream.progress',
          timeUnixNano: 1_767_225_600_100_000_001n,
          attributes: { 'tooltrace.stream.progress': 0.5 },
        },
        { name: 'exception', timeUnixNano: 1_767_225_600_200_000_000n, attributes: {} },
      ],
      links: [
        { traceId: TRACE_ID, spanId: '1111111111111111', attributes: { 'link.kind': 'retry' } },
      ],
      droppedAttributesCount: 1,
      droppedEventsCount: 2,
      droppedLinksCount: 3,
    });
    expect(roundTrip([original])).toEqual([original]);
  });

  it('groups spans by resource and scope and keeps every span', () => {
    const spans = [
      span({ spanId: '0000000000000001' }),
      span({ spanId: '0000000000000002', scope: { name: 'other', version: '' } }),
      span({ spanId: '0000000000000003', resource: { 'service.name': 'another' } }),
      span({ spanId: '0000000000000004' }),
    ];
    const request = JSON.parse(encodeOtlpJson(spans)) as {
      resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
    };
    expect(request.resourceSpans).toHaveLength(2);
    expect(request.resourceSpans[0]?.scopeSpans.map((scope) => scope.spans.length)).toEqual([2, 1]);
    const decoded = roundTrip(spans);
    expect(decoded.map((each) => each.spanId).sort()).toEqual(spans.map((each) => each.spanId));
    for (const original of spans) {
      expect(decoded.find((each) => each.spanId === original.spanId)).toEqual(original);
    }
  });

  it('writes an empty request for no spans', () => {
    expect(roundTrip([])).toEqual([]);
  });
});
