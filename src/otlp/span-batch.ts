import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * The spans of one export request, taken in one by one as they end. An encoding batch writes
 * each span's bytes at once and keeps no span object; {@link close} writes the request around
 * them.
 */
export interface SpanBatch<Body> {
  /** Spans added. */
  readonly size: number;
  /** Bytes of the body so far (0 for a batch that keeps the spans rather than their bytes). */
  readonly bytes: number;
  /** Adds `span` at the end; throws, adding nothing, when it cannot be encoded. */
  add(span: ReadableSpan): void;
  /** The request body of the spans added; nothing can be added after. */
  close(): Body;
}
