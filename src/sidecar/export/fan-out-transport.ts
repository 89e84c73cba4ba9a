import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanBatch } from '../../otlp/index.js';
import type { BatchTransport, ExportOutcome } from './export-outcome.js';

/** A batch's body in each transport, and what each made of it so far. */
interface FanOutBody {
  readonly parts: unknown[];
  /** Took it, or refused it for good: not sent again. */
  readonly done: boolean[];
  /** The first refusal for good, which the batch ends with once the others are done. */
  refusal: Extract<ExportOutcome, { kind: 'permanent' }> | undefined;
  rejectedSpans: number;
  rejectionMessage: string;
}

/**
 * Several {@link BatchTransport}s as one (`OTEL_TRACES_EXPORTER=otlp,console`, or OTLP beside
 * `--out`), so that one `ReliableSpanProcessor` drives them and its promises hold for all: a
 * span is encoded once per transport as it ends; a batch is done when every transport took it.
 * A retry goes only to the transports that did not take it yet, so the file does not get a
 * batch twice because the collector was down. The outcome is the worst of the parts: retryable
 * while one is worth retrying, else permanent when one refused it for good.
 */
export class FanOutTransport implements BatchTransport<FanOutBody> {
  readonly #transports: readonly BatchTransport[];

  constructor(transports: readonly BatchTransport[]) {
    this.#transports = transports;
  }

  openBatch(): SpanBatch<FanOutBody> {
    const batches = this.#transports.map((transport) => transport.openBatch());
    return {
      get size() {
        return batches[0]!.size;
      },
      get bytes() {
        return Math.max(...batches.map((batch) => batch.bytes));
      },
      add(span: ReadableSpan) {
        for (const batch of batches) batch.add(span);
      },
      close: () => ({
        parts: batches.map((batch) => batch.close()),
        done: batches.map(() => false),
        refusal: undefined,
        rejectedSpans: 0,
        rejectionMessage: '',
      }),
    };
  }

  async sendBatch(body: FanOutBody): Promise<ExportOutcome> {
    const outcomes = await Promise.all(
      this.#transports.map((transport, index) =>
        body.done[index] === true
          ? Promise.resolve(undefined)
          : transport.sendBatch(body.parts[index]),
      ),
    );
    let retryable: Extract<ExportOutcome, { kind: 'retryable' }> | undefined;
    outcomes.forEach((outcome, index) => {
      if (outcome === undefined) return;
      if (outcome.kind === 'retryable') {
        retryable ??= outcome;
        return;
      }
      body.done[index] = true;
      if (outcome.kind === 'permanent') {
        body.refusal ??= outcome;
      } else {
        body.rejectedSpans = Math.max(body.rejectedSpans, outcome.rejectedSpans);
        if (body.rejectionMessage === '') body.rejectionMessage = outcome.rejectionMessage;
      }
    });
    return (
      retryable ??
      body.refusal ?? {
        kind: 'success',
        rejectedSpans: body.rejectedSpans,
        rejectionMessage: body.rejectionMessage,
      }
    );
  }

  releaseBatch(body: FanOutBody): void {
    this.#transports.forEach((transport, index) => transport.releaseBatch(body.parts[index]));
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.#transports.map((transport) => transport.shutdown()));
  }
}
