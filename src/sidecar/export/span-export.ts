import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace-base';
import { createTraceExporter, type ExportConfig } from './export-config.js';
import { ReliableSpanProcessor } from './reliable-span-processor.js';

/** What the export counts; the sidecar's metrics implement it. */
export interface ExportMetrics {
  exported(spans: number, latencyMs: number): void;
  exportFailed(spans: number): void;
  refused(spans: number): void;
}

/** Options for {@link startSpanExport}. */
export interface SpanExportOptions {
  config: ExportConfig;
  /** Spans waiting for export before the processor reports itself full. */
  maxQueueSpans: number;
  metrics: ExportMetrics;
  log: (line: string) => void;
  /** A span started (checkpointing pins it to the line that caused it). */
  onSpanStarted?: (span: Span) => void;
  /** A span is done with: exported, or refused for good. */
  onSpanDone?: (span: ReadableSpan) => void;
  /** A batch was exported: there may be room for intake to read on. */
  onBatchExported?: () => void;
}

/**
 * The export room: a {@link ReliableSpanProcessor} over the configured OTLP exporter, counting
 * into `metrics` and logging once when export starts failing and once when it works again
 * (not per retry).
 */
export function startSpanExport(options: SpanExportOptions): ReliableSpanProcessor {
  const { config, metrics, log } = options;
  let failing = false;
  return new ReliableSpanProcessor(createTraceExporter(config), {
    maxQueueSpans: options.maxQueueSpans,
    ...(options.onSpanStarted === undefined ? {} : { onStart: options.onSpanStarted }),
    onExported: (spans, latencyMs) => {
      metrics.exported(spans.length, latencyMs);
      if (options.onSpanDone !== undefined) for (const span of spans) options.onSpanDone(span);
      if (failing) {
        failing = false;
        log(`tooltrace sidecar: export to ${config.tracesUrl} works again`);
      }
      options.onBatchExported?.();
    },
    onFailed: (error, spans) => {
      metrics.exportFailed(spans);
      if (!failing) {
        failing = true;
        log(
          `tooltrace sidecar: export to ${config.tracesUrl} failed (${error?.message ?? 'unknown error'}); retrying, nothing is dropped`,
        );
      }
    },
    onRefused: (span, error) => {
      metrics.refused(1);
      log(
        `tooltrace sidecar: ${config.tracesUrl} refused span ${span.name} (${span.spanContext().spanId}) for good: ${error?.message ?? 'unknown error'}`,
      );
      options.onSpanDone?.(span);
    },
  });
}
