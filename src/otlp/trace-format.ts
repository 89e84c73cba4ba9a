import type { Attributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { EncodingBatch, SpanGroup } from './encoding-batch.js';

/** A resource and an instrumentation scope, as spans carry them. */
export type SpanResource = ReadableSpan['resource'];
export type SpanScope = ReadableSpan['instrumentationScope'];

/**
 * How one OTLP format writes an `ExportTraceServiceRequest`: the pieces {@link TraceEncoder}
 * calls in the order it walks a span (ids, name, times, attributes, events, links, status), the
 * openings and closings around a batch's groups of spans, and the bytes written so far. A
 * method that opens something returns a mark its closing takes back (where protobuf's length
 * goes; JSON needs none). Protobuf ({@link ProtobufTraceFormat}) and JSON
 * ({@link JsonTraceFormat}) each implement it once; what a span holds and which of its fields
 * are left out at their default value is decided once, by the walk.
 */
export interface TraceFormat {
  /** Where the next byte goes in the batch's buffer. */
  position: number;
  /** Makes `batch`'s buffer the one written to. */
  load(batch: EncodingBatch): void;
  /** Keeps what was written (the buffer may have grown) in `batch`. */
  store(batch: EncodingBatch): void;
  /** The request up to the first group's spans, at the start of the batch's buffer. */
  openFirstGroup(batch: EncodingBatch, resource: SpanResource, scope: SpanScope): void;
  /** What goes between two spans of one group written one after the other. */
  spanSeparator(): void;
  /** The body of a batch of one group, around its spans. */
  closeOneGroup(batch: EncodingBatch, group: SpanGroup): Buffer;
  /** Starts a new buffer for a request written anew; returns the one holding the spans. */
  restart(batch: EncodingBatch): Buffer;
  openRequest(): void;
  openResource(resource: SpanResource, first: boolean): number;
  openScope(scope: SpanScope, first: boolean): number;
  /** Spans written before, copied; `first` of their scope or not. */
  copySpans(spans: Uint8Array, first: boolean): void;
  closeScope(scope: SpanScope, mark: number): void;
  closeResource(resource: SpanResource, mark: number): void;
  closeRequest(): void;
  /** The body written so far. */
  body(batch: EncodingBatch): Buffer;

  openSpan(traceId: string, spanId: string): number;
  traceState(traceState: string): void;
  parentSpanId(spanId: string): void;
  /** Flags (the OTLP `flags`), name and kind (the OTLP number). */
  spanHead(flags: number, name: string, kind: number): void;
  times(start: HrTime, end: HrTime): void;
  spanAttributes(attributes: Attributes): void;
  droppedAttributes(count: number): void;
  openEvents(): void;
  openEvent(index: number, time: HrTime, name: string): number;
  eventAttributes(attributes: Attributes): void;
  eventDroppedAttributes(count: number): void;
  closeEvent(mark: number): void;
  closeEvents(): void;
  droppedEvents(count: number): void;
  openLinks(): void;
  openLink(index: number, traceId: string, spanId: string, traceState: string): number;
  linkAttributes(attributes: Attributes): void;
  linkDroppedAttributes(count: number): void;
  closeLink(mark: number, flags: number): void;
  closeLinks(): void;
  droppedLinks(count: number): void;
  /** `code` the API's `SpanStatusCode` (OTLP's numbers), `message` `''` when it has none. */
  status(code: number, message: string): void;
  closeSpan(mark: number, flags: number): void;
}
