import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SHUT_DOWN, type BatchTransport, type ExportOutcome } from './export-outcome.js';
import type { SpanBatch } from '../../otlp/index.js';
import { formatSpan, type Escape } from './format-span.js';

/**
 * The `console` exporter of `OTEL_TRACES_EXPORTER`: each span as a readable block on a stream
 * (standard output), see {@link formatSpan}. A {@link BatchTransport}, so the same
 * `ReliableSpanProcessor` drives it: each span is formatted as it ends and let go, and a batch is
 * one write, awaited, so a slow reader (a pager, a pipe) pushes back on intake instead of piling
 * text up in memory. A stream that cannot be written (a closed pipe: `| head`) refuses the batch
 * for good, counted as dropped under `console`.
 */
export class ConsoleSpanExporter implements BatchTransport<string> {
  readonly #stream: NodeJS.WritableStream;
  readonly #escape: Escape;
  #shutdown = false;

  /** `escape` makes input safe on a terminal (the sidecar's `printable`). */
  constructor(stream: NodeJS.WritableStream, escape: Escape) {
    this.#stream = stream;
    this.#escape = escape;
    // A closed pipe is told to the write's callback too; unheard, the stream's `error` event
    // would end the process instead of the batch.
    stream.on('error', () => {});
  }

  /** Where spans go, for the start-up line. */
  get description(): string {
    return 'standard output (console)';
  }

  openBatch(): SpanBatch<string> {
    const blocks: string[] = [];
    let bytes = 0;
    return {
      get size() {
        return blocks.length;
      },
      get bytes() {
        return bytes;
      },
      add: (span: ReadableSpan) => {
        const block = formatSpan(span, this.#escape);
        blocks.push(block);
        bytes += block.length;
      },
      close: () => blocks.join(''),
    };
  }

  send(body: string): Promise<ExportOutcome> {
    if (this.#shutdown) return Promise.resolve(SHUT_DOWN);
    return new Promise((resolve) => {
      const failed = (error: NodeJS.ErrnoException): void =>
        resolve({
          kind: 'permanent',
          status: 'console',
          reason:
            error.code === 'EPIPE'
              ? 'standard output was closed (EPIPE: its reader stopped reading, as `| head` does)'
              : `standard output cannot be written: ${error.message}`,
        });
      try {
        this.#stream.write(body, (error?: Error | null) => {
          if (error === undefined || error === null) {
            resolve({ kind: 'success', rejectedSpans: 0, rejectionMessage: '' });
          } else {
            failed(error);
          }
        });
      } catch (error) {
        failed(error as NodeJS.ErrnoException);
      }
    });
  }

  releaseBatch(): void {}

  shutdown(): Promise<void> {
    this.#shutdown = true;
    return Promise.resolve();
  }
}
