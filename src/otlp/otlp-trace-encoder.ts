import type { NumberTypes } from './number-types.js';
import { ProtobufTraceFormat } from './protobuf-trace-format.js';
import { TraceEncoder } from './trace-encoder.js';

/**
 * Encodes spans as an OTLP `ExportTraceServiceRequest` in protobuf ({@link TraceEncoder} walking
 * each span once, {@link ProtobufTraceFormat} writing it). It writes the same messages as the
 * stock `ProtobufTraceSerializer` at about a quarter of its cost, which matters because encoding
 * dominates the sidecar's export work (`npm run bench:encoder`). Reuse one encoder: its caches
 * are kept, and the memory of bodies given back ({@link release}).
 */
export class OtlpTraceEncoder extends TraceEncoder {
  /** `numbers` decides int or double per key; share one with other encoders of the same stream. */
  constructor(numbers?: NumberTypes) {
    super((buffers, shared) => new ProtobufTraceFormat(buffers, shared), numbers);
  }
}
