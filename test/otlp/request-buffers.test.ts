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
import { RequestBuffers } from '../../src/otlp/request-buffers.js';

function spans(count: number, prefix: string): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'buffers' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  }).getTracer('buffers');
  for (let index = 0; index < count; index += 1) {
    tracer.startSpan(`${prefix} ${index}`, { attributes: { note: prefix.repeat(40) } }).end();
  }
  return memory.getFinishedSpans();
}

describe('RequestBuffers', () => {
  it('reuses a buffer only once it was given back', () => {
    const buffers = new RequestBuffers(1024);
    const first = buffers.take();
    const body = buffers.lend(first, 10);
    expect(buffers.take().buffer).not.toBe(first.buffer);
    buffers.give(body);
    expect(buffers.take().buffer).toBe(first.buffer);
  });

  it('takes back only what it lent, once', () => {
    const buffers = new RequestBuffers(1024);
    buffers.give(Buffer.allocUnsafeSlow(1024));
    const lent = buffers.lend(buffers.take(), 10);
    buffers.give(lent);
    buffers.give(lent);
    const first = buffers.take();
    expect(first.buffer).toBe(lent.buffer);
    expect(buffers.take().buffer).not.toBe(lent.buffer);
  });

  it('keeps no buffer smaller than the largest a body needed', () => {
    const buffers = new RequestBuffers(1024);
    const small = buffers.lend(buffers.take(), 10);
    const grown = buffers.grow(buffers.take(), 0, 5000);
    expect(grown.length).toBeGreaterThanOrEqual(5000);
    buffers.give(small);
    expect(buffers.take().length).toBeGreaterThanOrEqual(5000);
  });

  it('copies a body kept for later out of a buffer it fills less than half, and reuses that', () => {
    const buffers = new RequestBuffers(1024);
    const first = buffers.take();
    first.write('small body', 100, 'latin1');
    const kept = buffers.lendToKeep(first, 100, 110);
    expect(kept.toString('latin1')).toBe('small body');
    expect(kept.buffer).not.toBe(first.buffer);
    expect(buffers.take().buffer).toBe(first.buffer);
  });

  it('copies a body kept for later that fills less than seven eighths of its buffer', () => {
    // A batch just past a power of two must not hold a buffer twice its size while it waits.
    const buffers = new RequestBuffers(1024);
    const first = buffers.take();
    const kept = buffers.lendToKeep(first, 0, 600);
    expect(kept.length).toBe(600);
    expect(kept.buffer).not.toBe(first.buffer);
    expect(kept.buffer.byteLength).toBe(600);
  });

  it('makes later buffers no larger than it keeps after one huge body, and reuses them again', () => {
    const buffers = new RequestBuffers(1024);
    const huge = buffers.grow(buffers.take(), 0, 20 * 1024 * 1024);
    expect(huge.length).toBeGreaterThanOrEqual(20 * 1024 * 1024);
    buffers.give(buffers.lend(huge, 10));
    const next = buffers.take();
    expect(next.length).toBeLessThanOrEqual(8 * 1024 * 1024);
    buffers.give(buffers.lend(next, 10));
    expect(buffers.take().buffer).toBe(next.buffer);
  });

  it('lends a body kept for later that fills most of its buffer as a view of it', () => {
    const buffers = new RequestBuffers(1024);
    const first = buffers.take();
    const kept = buffers.lendToKeep(first, 6, 1000);
    expect(kept.buffer).toBe(first.buffer);
    expect(kept.length).toBe(994);
    buffers.give(kept);
    expect(buffers.take().buffer).toBe(first.buffer);
  });
});

describe.each([
  ['OtlpTraceEncoder', () => new OtlpTraceEncoder()],
  ['OtlpJsonTraceEncoder', () => new OtlpJsonTraceEncoder()],
])('%s bodies', (_name, newEncoder) => {
  it('are not written into by the next request until released', () => {
    const encoder = newEncoder();
    const first = encodeAll(encoder.openBatch(), spans(50, 'first'));
    const copy = Buffer.from(first);
    encodeAll(encoder.openBatch(), spans(80, 'second'));
    expect(Buffer.compare(first, copy)).toBe(0);
  });

  it('come out the same from released memory', () => {
    const encoder = newEncoder();
    const batch = spans(50, 'same');
    const fresh = Buffer.from(encodeAll(encoder.openBatch(), batch));
    encoder.release(encodeAll(encoder.openBatch(), spans(80, 'other')));
    expect(Buffer.compare(encodeAll(encoder.openBatch(), batch), fresh)).toBe(0);
  });
});
