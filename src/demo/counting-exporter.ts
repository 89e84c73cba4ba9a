import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** What a {@link CountingExporter} saw. */
export interface CountingExporterStats {
  /** Spans the wrapped exporter reported as exported. */
  exported: number;
  /** Spans whose export failed (the batch processor does not retry them). */
  failed: number;
  /** The message of the last failure. */
  lastError: string | undefined;
}

/**
 * Passes every batch on to another exporter and counts how each ended. A batch processor only
 * reports a failed scheduled export to the global error handler and then forgets it; counting
 * here lets the demo say afterwards whether its spans really reached the endpoint.
 */
export class CountingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #stats: CountingExporterStats = { exported: 0, failed: 0, lastError: undefined };

  constructor(inner: SpanExporter) {
    this.#inner = inner;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        this.#stats.exported += spans.length;
      } else {
        this.#stats.failed += spans.length;
        this.#stats.lastError = result.error?.message ?? 'export failed';
      }
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }

  /** A snapshot of the counts. */
  stats(): CountingExporterStats {
    return { ...this.#stats };
  }
}
