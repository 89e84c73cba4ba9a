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

  /**
   * Opens a span and writes its head: ids (`traceState` and `parentSpanId` `''` when it has
   * none), OTLP `flags`, name, kind (the OTLP number) and times; one call, as a span's many
   * fields are written for every span.
   */
  openSpan(
    traceId: string,
    spanId: string,
    traceState: string,
    parentSpanId: string,
    flags: number,
    name: string,
    kind: number,
    start: HrTime,
    end: HrTime,
  ): number;
  spanAttributes(attributes: Attributes): void;
  droppedAttributes(count: number): void;
  openEvents(): void;
  /**
   * One span event, the `index`th: its attributes when it has any, its dropped attributes when
   * more than none (one call per event: events are the most numerous part of a span).
   */
  event(
    index: number,
    time: HrTime,
    name: string,
    attributes: Attributes | undefined,
    droppedAttributes: number,
  ): void;
  closeEvents(): void;
  droppedEvents(count: number): void;
  openLinks(): void;
  openLink(index: number, traceId: string, spanId: string, traceState: string): number;
  linkAttributes(attributes: Attributes): void;
  linkDroppedAttributes(count: number): void;
  closeLink(mark: number, flags: number): void;
  closeLinks(): void;
  droppedLinks(count: number): void;
  /**
   * The status (`code` the API's `SpanStatusCode`, OTLP's numbers; `message` `''` when it has
   * none), the flags where the format puts them last, and the span's end.
   */
  closeSpan(mark: number, code: number, message: string, flags: number): void;
}
