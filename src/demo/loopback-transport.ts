import {
  decodeTraceRequest,
  OtlpTraceEncoder,
  type ReceivedSpan,
  type SpanBatch,
} from '../otlp/index.js';
import type { BatchTransport, ExportOutcome } from '../sidecar/export/index.js';
import { tooltraceNumberTypes } from '../sidecar/export/index.js';

const ACCEPTED: ExportOutcome = { kind: 'success', rejectedSpans: 0, rejectionMessage: '' };

/**
 * The demo's embedded receiver, in its own process and without a socket: the batches the
 * sidecar's span processor drives are encoded by the sidecar's OTLP protobuf encoder, the bytes
 * an OTLP/HTTP export would send, and each request body is decoded back into spans as a
 * collector would read it. So the drawing is made from what really went over OTLP, with no
 * server to start and nothing of `tooltrace/testing` in product code.
 */
export class LoopbackTransport implements BatchTransport<Buffer> {
  readonly #encoder = new OtlpTraceEncoder(tooltraceNumberTypes());
  readonly #spans: ReceivedSpan[] = [];
  #closed = false;

  /** The spans received so far, in the order their requests arrived. */
  get spans(): readonly ReceivedSpan[] {
    return this.#spans;
  }

  openBatch(): SpanBatch<Buffer> {
    return this.#encoder.openBatch();
  }

  send(body: Buffer): Promise<ExportOutcome> {
    if (this.#closed) {
      return Promise.resolve({
        kind: 'permanent',
        status: 'shutdown',
        reason: 'the embedded receiver was closed',
      });
    }
    try {
      for (const span of decodeTraceRequest(body, 'application/x-protobuf')) this.#spans.push(span);
    } catch (error) {
      // A request the decoder refuses is one a collector would answer with 400: not retried.
      return Promise.resolve({ kind: 'permanent', status: '400', reason: String(error) });
    }
    return Promise.resolve(ACCEPTED);
  }

  releaseBatch(body: Buffer): void {
    this.#encoder.release(body);
  }

  shutdown(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}
