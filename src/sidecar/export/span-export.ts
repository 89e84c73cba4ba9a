import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace-base';
import type { ExportConfig } from './export-config.js';
import { ReliableSpanProcessor, type ExportBatch } from './reliable-span-processor.js';
import { createSpanTransport, type SpanExporters } from './span-transports.js';

/** What the export counts; the sidecar's metrics implement it. */
export interface ExportMetrics {
  exported(spans: number, latencyMs: number): void;
  exportFailed(spans: number): void;
  dropped(status: string, spans: number): void;
  rejectedSpans(spans: number): void;
}

/** Options for {@link startSpanExport}. */
export interface SpanExportOptions {
  config: ExportConfig;
  /** Where spans go: OTLP (as `config` says), standard output, a file. @default OTLP only */
  exporters?: SpanExporters;
  /** Spans waiting for export before the processor reports itself full. */
  maxQueueSpans: number;
  metrics: ExportMetrics;
  log: (line: string) => void;
  /** A span started (checkpointing pins it to the line that caused it). */
  onSpanStarted?: (span: Span) => void;
  /**
   * A span ended, and is about to be encoded and let go: what this returns (a pin's receipt) is
   * kept in its place and given to {@link onSpanDone}.
   */
  onSpanEnded?: (span: ReadableSpan) => object | undefined;
  /** What {@link onSpanEnded} kept of a span that is done with: exported, rejected, or dropped. */
  onSpanDone?: (kept: object) => void;
  /** A batch was exported: there may be room for intake to read on. */
  onBatchExported?: () => void;
  /** A batch was refused for good (the sidecar on `--stdin` stops at the first). */
  onDropped?: (status: string) => void;
}

/** What {@link startSpanExport} started. */
export interface SpanExport {
  readonly processor: ReliableSpanProcessor;
  /** Where spans go, for the start-up line (`nowhere` with no exporter). */
  readonly description: string;
  /** False with no exporter: spans are let go as they end, and not counted as exported. */
  readonly exporting: boolean;
}

/**
 * The export room: a {@link ReliableSpanProcessor} over the chosen exporters (OTLP, console, an
 * OTLP JSON file; several at once behind one fan-out transport), counting into `metrics`. Logs once when export starts failing in a way worth retrying and once when it
 * works again (not per retry); the first permanent failure of each status once, with the
 * endpoint's message; the first `partial_success` rejection once, with its message.
 */
export async function startSpanExport(options: SpanExportOptions): Promise<SpanExport> {
  const { config, metrics, log } = options;
  const chosen = await createSpanTransport(config, options.exporters ?? { otlp: true });
  let failing = false;
  let reportedRejection = false;
  const reportedStatuses = new Set<string>();
  const done = (batch: ExportBatch): void => {
    if (options.onSpanDone !== undefined) for (const kept of batch.kept) options.onSpanDone(kept);
  };
  const processor = new ReliableSpanProcessor(chosen.transport, {
    maxQueueSpans: options.maxQueueSpans,
    maxRetryAfterMs: config.maxRetryAfterMs,
    ...(options.onSpanStarted === undefined ? {} : { onStart: options.onSpanStarted }),
    ...(options.onSpanEnded === undefined ? {} : { onEnd: options.onSpanEnded }),
    onExported: (spans, latencyMs, rejected) => {
      if (chosen.exporting) metrics.exported(spans.length - rejected, latencyMs);
      done(spans);
      if (failing) {
        failing = false;
        log(`tooltrace sidecar: export to ${chosen.description} works again`);
      }
      options.onBatchExported?.();
    },
    onFailed: (reason, spans) => {
      metrics.exportFailed(spans);
      if (!failing) {
        failing = true;
        log(`tooltrace sidecar: export failed (${reason}); retrying, nothing is dropped`);
      }
    },
    onDropped: (spans, status, reason) => {
      metrics.dropped(status, spans.length);
      done(spans);
      if (!reportedStatuses.has(status)) {
        reportedStatuses.add(status);
        const named =
          spans.length === 0 ? '' : `, ${spans.firstSpanName} (${spans.firstSpanId}) among them`;
        log(
          `tooltrace sidecar: export refused for good: ${reason}; ${spans.length} spans dropped${named} (not retried; counted in tooltrace_spans_dropped_total)`,
        );
      }
      options.onDropped?.(status);
      options.onBatchExported?.();
    },
    onRejected: (rejected, message) => {
      metrics.rejectedSpans(rejected);
      if (!reportedRejection) {
        reportedRejection = true;
        log(
          `tooltrace sidecar: ${config.tracesUrl} accepted a batch but rejected ${rejected} spans: ${message === '' ? '(no message)' : message}`,
        );
      }
    },
  });
  return { processor, description: chosen.description, exporting: chosen.exporting };
}
