import { JsonTraceFormat } from './json-trace-format.js';
import type { NumberTypes } from './number-types.js';
import { TraceEncoder } from './trace-encoder.js';

/**
 * Encodes spans as an OTLP/JSON `ExportTraceServiceRequest` ({@link TraceEncoder} walking each
 * span once, {@link JsonTraceFormat} writing it): the same messages as the stock
 * `JsonTraceSerializer` (which builds an object tree and then `JSON.stringify`s it) and as
 * {@link OtlpTraceEncoder} in protobuf, fields at their default value (zero counts, empty lists
 * and strings) left out, at about a third of the stock serializer's cost
 * (`npm run bench:encoder`). Reuse one encoder: its caches are kept, and the memory of bodies
 * given back ({@link release}).
 */
export class OtlpJsonTraceEncoder extends TraceEncoder {
  /** `numbers` decides int or double per key; share one with other encoders of the same stream. */
  constructor(numbers?: NumberTypes) {
    super((buffers, shared) => new JsonTraceFormat(buffers, shared), numbers);
  }
}
