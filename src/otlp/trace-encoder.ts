import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { addRange, BatchEncoder, followsOwnSpan, type EncodingBatch } from './encoding-batch.js';
import type { NumberTypes } from './number-types.js';
import type { RequestBuffers } from './request-buffers.js';
import { spanFlags } from './span-encoding.js';
import type { TraceFormat } from './trace-format.js';

/**
 * Encodes spans as an OTLP `ExportTraceServiceRequest` in the format its {@link TraceFormat}
 * writes, in one pass over one growing buffer: each span is walked once, here, and its parts
 * handed to the format in order (its head, attributes, each event, links, status); spans are
 * grouped by resource and instrumentation scope (by identity) as the stock serializers group
 * them. What a span holds and what is left out at its default value (zero counts, empty lists
 * and strings) is decided by this walk for both formats, so protobuf and JSON carry the same
 * request. A span's head and each event are one call each: with both formats in one process the
 * calls into the format are polymorphic, and fewer of them keep the walk at the speed of the two
 * encoders it replaced (`npm run bench:encoder`). Reuse one encoder: its format's caches are
 * kept, and the memory of bodies given back ({@link release}).
 */
export abstract class TraceEncoder extends BatchEncoder {
  readonly #format: TraceFormat;

  /** `format` makes the writer of this encoder's format, over its buffers and number types. */
  protected constructor(
    format: (buffers: RequestBuffers, numbers: NumberTypes) => TraceFormat,
    numbers: NumberTypes | undefined,
  ) {
    super(numbers);
    this.#format = format(this.buffers, this.numbers);
  }

  /**
   * Writes `span` at the end of `batch`. The first group's opening starts the buffer: a batch
   * of one group, the rule, is then its own body once closed.
   */
  protected addSpan(batch: EncodingBatch, span: ReadableSpan): void {
    const format = this.#format;
    format.load(batch);
    const before = format.position;
    let group = batch.groupOf(span);
    const created = group === undefined;
    try {
      if (group === undefined) {
        group = { resource: span.resource, scope: span.instrumentationScope, ranges: [] };
        if (batch.groups.length === 0) {
          format.openFirstGroup(batch, span.resource, span.instrumentationScope);
        }
        batch.groups.push(group);
      }
      const start = format.position;
      if (followsOwnSpan(group, start)) format.spanSeparator();
      this.#span(format, span);
      addRange(group, start, format.position);
    } catch (error) {
      if (created) batch.groups.pop();
      format.position = before;
      throw error;
    } finally {
      format.store(batch);
    }
    batch.last = group;
    batch.size += 1;
  }

  protected closeBatch(batch: EncodingBatch): Buffer {
    const format = this.#format;
    format.load(batch);
    const groups = batch.groups;
    if (groups.length === 1) return format.closeOneGroup(batch, groups[0]!);
    // Several groups (or none): the request is written anew around copies of their spans.
    const spans = format.restart(batch);
    format.openRequest();
    let firstResource = true;
    for (const scopes of batch.byResource()) {
      const resource = scopes[0]!.resource;
      const resourceMark = format.openResource(resource, firstResource);
      firstResource = false;
      for (let scope = 0; scope < scopes.length; scope += 1) {
        const group = scopes[scope]!;
        const scopeMark = format.openScope(group.scope, scope === 0);
        const ranges = group.ranges;
        for (let index = 0; index < ranges.length; index += 2) {
          format.copySpans(spans.subarray(ranges[index], ranges[index + 1]), index === 0);
        }
        format.closeScope(group.scope, scopeMark);
      }
      format.closeResource(resource, resourceMark);
    }
    format.closeRequest();
    this.buffers.reuse(spans);
    return format.body(batch);
  }

  #span(format: TraceFormat, span: ReadableSpan): void {
    const context = span.spanContext();
    const traceState = context.traceState?.serialize() ?? '';
    const parent = span.parentSpanContext;
    const flags = spanFlags(context.traceFlags, parent?.isRemote);
    const message = format.openSpan(
      context.traceId,
      context.spanId,
      traceState,
      parent?.spanId ?? '',
      flags,
      span.name,
      span.kind + 1,
      span.startTime,
      span.endTime,
    );
    format.spanAttributes(span.attributes);
    if (span.droppedAttributesCount > 0) format.droppedAttributes(span.droppedAttributesCount);
    const events = span.events;
    if (events.length > 0) {
      format.openEvents();
      for (let index = 0; index < events.length; index += 1) {
        const event = events[index]!;
        const dropped = event.droppedAttributesCount ?? 0;
        format.event(index, event.time, event.name, event.attributes, dropped);
      }
      format.closeEvents();
    }
    if (span.droppedEventsCount > 0) format.droppedEvents(span.droppedEventsCount);
    const links = span.links;
    if (links.length > 0) {
      format.openLinks();
      for (let index = 0; index < links.length; index += 1) {
        const link = links[index]!;
        const linkContext = link.context;
        const linkMark = format.openLink(
          index,
          linkContext.traceId,
          linkContext.spanId,
          linkContext.traceState?.serialize() ?? '',
        );
        if (link.attributes !== undefined) format.linkAttributes(link.attributes);
        const dropped = link.droppedAttributesCount ?? 0;
        if (dropped > 0) format.linkDroppedAttributes(dropped);
        format.closeLink(linkMark, spanFlags(linkContext.traceFlags, linkContext.isRemote));
      }
      format.closeLinks();
    }
    if (span.droppedLinksCount > 0) format.droppedLinks(span.droppedLinksCount);
    format.closeSpan(message, span.status.code, span.status.message ?? '', flags);
  }
}
