import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { OtlpJsonTraceEncoder, OtlpTraceEncoder } from '../../src/otlp/index.js';
import { encodeAll } from './encode-all.js';
import { decodeTraceRequest } from '../../src/otlp/index.js';
import { tooltraceNumberTypes } from '../../src/sidecar/export/tooltrace-number-types.js';
import { otlpProtoTypes } from './otlp-proto-schema.js';

/** Three spans whose `ratio` is whole, fractional, whole; progress is whole every time. */
function spans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'types' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  }).getTracer('types', '1.0.0');
  for (const ratio of [1, 0.5, 1]) {
    const span = tracer.startSpan('call', {
      attributes: { ratio, 'tooltrace.stream.progress': 1, count: 3, sizes: [1, 2] },
    });
    span.addEvent('tick', { at: 2 });
    span.end();
  }
  return memory.getFinishedSpans();
}

/** The `AnyValue` field each span's attribute `key` was written with. */
type Kinds = Record<string, string>[];

function jsonKinds(body: Buffer): Kinds {
  const request = JSON.parse(body.toString()) as {
    resourceSpans: {
      scopeSpans: { spans: { attributes: { key: string; value: Record<string, unknown> }[] }[] }[];
    }[];
  };
  return request.resourceSpans[0]!.scopeSpans[0]!.spans.map((span) =>
    Object.fromEntries(span.attributes.map(({ key, value }) => [key, Object.keys(value)[0]!])),
  );
}

function protobufKinds(body: Buffer): Kinds {
  const request = otlpProtoTypes().exportTraceServiceRequest.toObject(
    otlpProtoTypes().exportTraceServiceRequest.decode(body),
  ) as {
    resourceSpans: {
      scopeSpans: { spans: { attributes: { key: string; value: Record<string, unknown> }[] }[] }[];
    }[];
  };
  return request.resourceSpans[0]!.scopeSpans[0]!.spans.map((span) =>
    Object.fromEntries(span.attributes.map(({ key, value }) => [key, Object.keys(value)[0]!])),
  );
}

describe('number types per attribute key', () => {
  const expected: Kinds = [
    {
      ratio: 'intValue',
      'tooltrace.stream.progress': 'doubleValue',
      count: 'intValue',
      sizes: 'arrayValue',
    },
    {
      ratio: 'doubleValue',
      'tooltrace.stream.progress': 'doubleValue',
      count: 'intValue',
      sizes: 'arrayValue',
    },
    {
      ratio: 'doubleValue',
      'tooltrace.stream.progress': 'doubleValue',
      count: 'intValue',
      sizes: 'arrayValue',
    },
  ];

  it("keeps a key a double once it was fractional, and the sidecar's tooltrace progress always, in protobuf", () => {
    expect(
      protobufKinds(encodeAll(new OtlpTraceEncoder(tooltraceNumberTypes()).openBatch(), spans())),
    ).toEqual(expected);
  });

  it('does the same in JSON', () => {
    expect(
      jsonKinds(encodeAll(new OtlpJsonTraceEncoder(tooltraceNumberTypes()).openBatch(), spans())),
    ).toEqual(expected);
  });

  it('writes a whole number as an int for a key it was not given, until one is fractional', () => {
    const kinds = protobufKinds(encodeAll(new OtlpTraceEncoder().openBatch(), spans()));
    expect(kinds.map((span) => span['tooltrace.stream.progress'])).toEqual([
      'intValue',
      'intValue',
      'intValue',
    ]);
  });
});

describe('OtlpJsonTraceEncoder', () => {
  it('writes the spans the protobuf encoder writes, as the receiver decodes them', () => {
    const batch = spans();
    const fromJson = decodeTraceRequest(
      encodeAll(new OtlpJsonTraceEncoder().openBatch(), batch),
      'json',
    );
    const fromProtobuf = decodeTraceRequest(
      encodeAll(new OtlpTraceEncoder().openBatch(), batch),
      'protobuf',
    );

    expect(fromJson.map((span) => ({ ...span, encoding: 'protobuf' }))).toEqual(fromProtobuf);
    expect(fromJson[1]!.attributes.ratio).toBe(0.5);
    expect(fromJson[0]!.resource['service.name']).toBe('types');
  });
});
