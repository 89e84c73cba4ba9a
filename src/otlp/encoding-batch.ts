import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanBatch } from './span-batch.js';
import { NumberTypes } from './number-types.js';
import { RequestBuffers } from './request-buffers.js';

/**
 * The spans of one scope (of one resource) in an {@link EncodingBatch}: where their bytes lie in
 * the batch's buffer, as flat `start, end` pairs. Spans of one group that follow each other in
 * the buffer make one range, so a batch of one group, the rule, has one.
 */
export interface SpanGroup {
  readonly resource: ReadableSpan['resource'];
  readonly scope: ReadableSpan['instrumentationScope'];
  readonly ranges: number[];
}

/** What an encoder does with its batches: {@link EncodingBatch} calls back into it. */
export interface BatchEncoding {
  /** Encodes `span` at the end of `batch`; on a throw, `batch` is as it was. */
  add(batch: EncodingBatch, span: ReadableSpan): void;
  /** The request body of `batch`'s spans. */
  close(batch: EncodingBatch): Buffer;
}

/**
 * An export request being filled: each span is encoded into the buffer as it is added, and only
 * its bytes are kept, so the span object can die young. Spans are grouped as OTLP nests them, by
 * resource, then by instrumentation scope, each group in first-seen order (spans keep their
 * order within it); closing writes the request around them. The state is the encoder's to read
 * and write; the processor only adds and closes.
 */
export class EncodingBatch implements SpanBatch<Buffer> {
  buffer: Buffer;
  view: DataView;
  position = 0;
  size = 0;
  /** The groups in first-seen order. */
  readonly groups: SpanGroup[] = [];
  /** The group the last span went to: the next is most likely of it too. */
  last: SpanGroup | undefined;
  /** Where the first group's `resource` field lies, and its `scope` field starts (protobuf). */
  resourceStart = 0;
  resourceEnd = 0;
  scopeStart = 0;
  readonly #encoding: BatchEncoding;

  constructor(encoding: BatchEncoding, buffer: Buffer) {
    this.#encoding = encoding;
    this.buffer = buffer;
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  get bytes(): number {
    return this.position;
  }

  add(span: ReadableSpan): void {
    this.#encoding.add(this, span);
  }

  close(): Buffer {
    return this.#encoding.close(this);
  }

  /** The group of `span`, or `undefined` when it is the first of its resource and scope. */
  groupOf(span: ReadableSpan): SpanGroup | undefined {
    const last = this.last;
    if (
      last !== undefined &&
      last.resource === span.resource &&
      last.scope === span.instrumentationScope
    ) {
      return last;
    }
    for (const group of this.groups) {
      if (group.resource === span.resource && group.scope === span.instrumentationScope) {
        return group;
      }
    }
    return undefined;
  }

  /** The groups by resource, each resource and its scopes in first-seen order. */
  byResource(): SpanGroup[][] {
    const resources = new Map<unknown, SpanGroup[]>();
    for (const group of this.groups) {
      const scopes = resources.get(group.resource);
      if (scopes === undefined) resources.set(group.resource, [group]);
      else scopes.push(group);
    }
    return [...resources.values()];
  }
}

/** Records that `group`'s span takes the bytes from `start` to `end` of its batch's buffer. */
export function addRange(group: SpanGroup, start: number, end: number): void {
  const ranges = group.ranges;
  const last = ranges.length - 1;
  if (last > 0 && ranges[last] === start) ranges[last] = end;
  else ranges.push(start, end);
}

/** Whether the last span written in `group`'s batch ends at `position` and is of `group`. */
export function followsOwnSpan(group: SpanGroup, position: number): boolean {
  const ranges = group.ranges;
  return ranges.length > 0 && ranges[ranges.length - 1] === position;
}

/**
 * What the protobuf and JSON encoders share: the memory request bodies are written into (taken
 * per batch, given back once sent), the number types per key, and the calls a transport makes.
 * A subclass writes a span into a batch ({@link BatchEncoder.addSpan}) and closes the request
 * around the batch's spans ({@link BatchEncoder.closeBatch}).
 */
export abstract class BatchEncoder {
  protected readonly buffers = new RequestBuffers(1024 * 1024);
  protected readonly numbers: NumberTypes;
  readonly #encoding: BatchEncoding = {
    add: (batch, span) => this.addSpan(batch, span),
    close: (batch) => this.closeBatch(batch),
  };

  /** `numbers` decides int or double per key; share one with other encoders of the same stream. */
  constructor(numbers: NumberTypes = new NumberTypes()) {
    this.numbers = numbers;
  }

  /**
   * A batch that encodes each span as it is added and keeps only its bytes; its body, when
   * closed, is the caller's: the encoder writes the next into other memory. Batches are
   * independent of each other; {@link release} a body once it will not be sent again.
   */
  openBatch(): SpanBatch<Buffer> {
    return new EncodingBatch(this.#encoding, this.buffers.take());
  }

  /** Takes back a closed batch's body, once nothing reads it any more (it was sent). */
  release(body: Uint8Array): void {
    this.buffers.give(body);
  }

  /** Writes `span` at the end of `batch`. */
  protected abstract addSpan(batch: EncodingBatch, span: ReadableSpan): void;

  /** The request body of `batch`'s spans. */
  protected abstract closeBatch(batch: EncodingBatch): Buffer;
}
