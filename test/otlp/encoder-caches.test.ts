import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
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
import { decodeTraceRequest, type ReceivedSpan } from '../../src/otlp/index.js';

const VALUES = ['search', 'search', 'fetch', 'search', 'ü', 'ü', 'x'.repeat(300), 'x'.repeat(300)];

/**
 * Spans whose string values repeat, change back and forth, go non-ASCII and long, a number
 * under a key too long for a one-byte length, names that repeat and one too long to keep, and
 * times spread over several seconds: what the encoders' caches and shortcuts see.
 */
function spans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'caches' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  }).getTracer('caches', '1.0.0');
  for (let index = 0; index < 40; index += 1) {
    const value = VALUES[index % VALUES.length]!;
    const name = index === 7 ? `long ${'n'.repeat(400)}` : `execute_tool ${value.slice(0, 8)}`;
    const span = tracer.startSpan(name, {
      startTime: [1_777_636_800 + (index % 3), index * 1_000_003],
      attributes: {
        tool: value,
        constant: 'execute_tool',
        id: `tc_${index}`,
        count: index,
        ratio: index / 4,
        negative: -index,
        flag: index % 2 === 0,
        [`key ${index % 5}`]: value,
        [`long key ${'k'.repeat(200)}`]: index % 2 === 0 ? index * 1000 : index / 3,
      },
    });
    for (let sequence = 0; sequence < 3; sequence += 1) {
      span.addEvent(
        sequence % 2 === 0 ? 'tool.stream.progress' : 'tool.stream.partial',
        { sequence, note: VALUES[(index + sequence) % VALUES.length]! },
        [1_777_636_801 + sequence, 999_999_999 - sequence],
      );
    }
    span.end([1_777_636_803, index]);
  }
  return memory.getFinishedSpans();
}

function decoded(body: Uint8Array, contentType: string): Omit<ReceivedSpan, 'encoding'>[] {
  return decodeTraceRequest(body, contentType).map(({ encoding: _encoding, ...span }) => span);
}

describe('encoder caches', () => {
  it('write, request after request, what the stock protobuf serializer writes', () => {
    const encoder = new OtlpTraceEncoder();
    const batch = spans();
    const stock = decoded(ProtobufTraceSerializer.serializeRequest(batch)!, 'protobuf');
    for (let round = 0; round < 3; round += 1) {
      const body = encodeAll(encoder.openBatch(), batch);
      expect(decoded(body, 'protobuf')).toEqual(stock);
      encoder.release(body);
    }
  });

  it('write, request after request, what the stock JSON serializer writes', () => {
    const encoder = new OtlpJsonTraceEncoder();
    const batch = spans();
    const stock = decoded(JsonTraceSerializer.serializeRequest(batch)!, 'application/json');
    for (let round = 0; round < 3; round += 1) {
      const body = encodeAll(encoder.openBatch(), batch);
      expect(decoded(body, 'application/json')).toEqual(stock);
      encoder.release(body);
    }
  });
});
