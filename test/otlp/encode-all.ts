import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanBatch } from '../../src/otlp/index.js';

/** The request body of `spans` added to `batch` one after the other, as an exporter fills one. */
export function encodeAll<Body>(batch: SpanBatch<Body>, spans: readonly ReadableSpan[]): Body {
  for (const span of spans) batch.add(span);
  return batch.close();
}
