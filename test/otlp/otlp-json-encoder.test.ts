import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { OtlpJsonTraceEncoder, OtlpTraceEncoder } from '../../src/otlp/index.js';
import { encodeAll } from './encode-all.js';
import { decodeTraceRequest, type ReceivedSpan } from '../../src/otlp/index.js';

/** Spans from two providers (two resources) and two tracers, covering every field written. */
function spansToEncode(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ 'service.name': 'json', 'host.cpus': 2, ratio: 0.5, tags: ['a'] }),
    ),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const other = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'other' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('first', '1.0.0');
  const second = provider.getTracer('second');
  const parent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState('vendor=value'),
  });
  const span = tracer.startSpan(
    'execute_tool "söke" ☃',
    {
      kind: SpanKind.CLIENT,
      startTime: [1_777_636_800, 123_456_789],
      attributes: {
        text: 'plain',
        escapes: 'quote " backslash \\ newline \n tab \t bell \u0007 del \u007f',
        unicode: 'héllo 𝄞 wörld',
        'key "quoted" ü': 'value',
        long: 'x'.repeat(3000),
        integer: 42,
        zero: 0,
        negative: -7,
        large: 2 ** 60,
        double: -0.25,
        tiny: 1e-7,
        flag: true,
        no: false,
        strings: ['a', 'b"c'],
        numbers: [1, 2.5],
        emptyList: [],
        empty: '',
      },
    },
    parent,
  );
  span.addLink({
    context: {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.NONE,
    },
    attributes: { why: 'follows' },
  });
  span.addLink({
    context: {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4737',
      spanId: '00f067aa0ba902b8',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    },
  });
  for (let index = 0; index < 20; index += 1) {
    span.addEvent(`event ${index}`, { index, note: 'n'.repeat(index * 10) }, [
      1_777_636_801,
      index * 1000,
    ]);
  }
  span.addEvent('bare', [1_777_636_801, 999_999_999]);
  span.setStatus({ code: 2, message: 'failed: ☃ "why"' });
  span.end([1_777_636_802, 5]);
  const root = second.startSpan('root', { attributes: { 'a.b': 1 }, startTime: [0, 12] });
  root.setStatus({ code: 1 });
  root.end([0, 999]);
  for (let index = 0; index < 300; index += 1) {
    tracer.startSpan(`many ${index}`, { attributes: { index } }).end();
  }
  other.getTracer('elsewhere').startSpan('unset status').end();
  return memory.getFinishedSpans();
}

/** The decoded spans, without the field saying which encoding they came in. */
function decoded(body: Uint8Array, contentType: string): Omit<ReceivedSpan, 'encoding'>[] {
  return decodeTraceRequest(body, contentType).map(({ encoding: _encoding, ...span }) => span);
}

describe('OtlpJsonTraceEncoder', () => {
  it('writes what the stock JSON serializer writes, once both are decoded', () => {
    const spans = spansToEncode();
    const stock = decoded(JsonTraceSerializer.serializeRequest(spans)!, 'application/json');
    const ours = decoded(
      encodeAll(new OtlpJsonTraceEncoder().openBatch(), spans),
      'application/json',
    );

    expect(stock).toHaveLength(spans.length);
    expect(ours).toEqual(stock);
  });

  it('writes what the protobuf encoder writes, once both are decoded', () => {
    const spans = spansToEncode();
    const protobuf = decoded(
      encodeAll(new OtlpTraceEncoder().openBatch(), spans),
      'application/x-protobuf',
    );

    expect(
      decoded(encodeAll(new OtlpJsonTraceEncoder().openBatch(), spans), 'application/json'),
    ).toEqual(protobuf);
  });

  it('follows the OTLP JSON mapping: hex ids, int64 as strings, enums as numbers', () => {
    const spans = spansToEncode();
    const body = JSON.parse(
      encodeAll(new OtlpJsonTraceEncoder().openBatch(), spans).toString('utf8'),
    ) as {
      resourceSpans: {
        scopeSpans: { scope: { name: string; version?: string }; spans: unknown[] }[];
      }[];
    };
    const first = body.resourceSpans[0]!.scopeSpans[0]!;
    expect(first.scope).toEqual({ name: 'first', version: '1.0.0' });
    expect(first.spans[0]).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: 'b7ad6b7169203331',
      traceState: 'vendor=value',
      kind: 3,
      flags: 0x301,
      startTimeUnixNano: '1777636800123456789',
      endTimeUnixNano: '1777636802000000005',
      status: { code: 2, message: 'failed: ☃ "why"' },
    });
    const attributes = (first.spans[0] as { attributes: { key: string; value: unknown }[] })
      .attributes;
    const value = (key: string) => attributes.find((attribute) => attribute.key === key)?.value;
    expect(value('integer')).toEqual({ intValue: '42' });
    expect(value('large')).toEqual({ intValue: '1152921504606846976' });
    expect(value('double')).toEqual({ doubleValue: -0.25 });
    // One number type per key (NumberTypes): an array with a fraction in it is doubles throughout.
    expect(value('numbers')).toEqual({
      arrayValue: { values: [{ doubleValue: 1 }, { doubleValue: 2.5 }] },
    });
    expect(value('emptyList')).toEqual({ arrayValue: {} });
    const root = body.resourceSpans[0]!.scopeSpans[1]!.spans[0] as Record<string, unknown>;
    // Times before the first second have no seconds part; default fields are left out.
    expect(root.startTimeUnixNano).toBe('12');
    expect(root).not.toHaveProperty('events');
    expect(root).not.toHaveProperty('droppedAttributesCount');
  });

  it('spells NaN and the infinities as strings, and escapes lone surrogates', () => {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
    provider
      .getTracer('t')
      .startSpan('odd', {
        attributes: { nan: Number.NaN, up: Infinity, down: -Infinity, lone: 'a\ud800b' },
      })
      .end();
    const text = encodeAll(
      new OtlpJsonTraceEncoder().openBatch(),
      memory.getFinishedSpans(),
    ).toString('utf8');

    expect(text).toContain('"doubleValue":"NaN"');
    expect(text).toContain('"doubleValue":"Infinity"');
    expect(text).toContain('"doubleValue":"-Infinity"');
    expect(text).toContain('"stringValue":"a\\ud800b"');
    expect(decoded(Buffer.from(text), 'application/json')[0]!.attributes).toMatchObject({
      nan: Number.NaN,
      up: Infinity,
      down: -Infinity,
    });
  });

  it('writes times before 1970 as the stock serializer does (OTLP receivers refuse them)', () => {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
    provider
      .getTracer('t')
      .startSpan('1969', { startTime: [-2, 5] })
      .end([-1, 999_999_999]);
    const spans = memory.getFinishedSpans();
    const times = (body: Uint8Array) => {
      const span = (
        JSON.parse(Buffer.from(body).toString('utf8')) as {
          resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[];
        }
      ).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
      return [span.startTimeUnixNano, span.endTimeUnixNano];
    };

    expect(times(encodeAll(new OtlpJsonTraceEncoder().openBatch(), spans))).toEqual([
      '-1999999995',
      '-1',
    ]);
    expect(times(encodeAll(new OtlpJsonTraceEncoder().openBatch(), spans))).toEqual(
      times(JsonTraceSerializer.serializeRequest(spans)!),
    );
  });

  it('keeps its buffer: a second, smaller request is not polluted by the first', () => {
    const spans = spansToEncode();
    const encoder = new OtlpJsonTraceEncoder();
    encodeAll(encoder.openBatch(), spans);

    expect(decoded(encodeAll(encoder.openBatch(), spans.slice(0, 1)), 'application/json')).toEqual(
      decoded(JsonTraceSerializer.serializeRequest(spans.slice(0, 1))!, 'application/json'),
    );
  });
});
