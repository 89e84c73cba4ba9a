import { counted as withNoun } from '../../errors/index.js';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace-base';
import type { ExportConfig } from './export-config.js';
import { ReliableSpanProcessor, type ExportBatch } from './reliable-span-processor.js';
import { SpanDestinations, type SpanDestination } from './span-destinations.js';
import { createSpanTransports, type SpanExporters } from './span-transports.js';

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
  /** The span processor: each destination's own processor behind one. */
  readonly processor: SpanDestinations;
  /** Where spans go, for the start-up line (`nowhere` with no exporter). */
  readonly description: string;
  /** False with no exporter: spans are let go as they end, and not counted as exported. */
  readonly exporting: boolean;
}

/** A checkpoint receipt shared by every destination: given back when the last is done. */
interface SharedReceipt {
  readonly receipt: object;
  remaining: number;
}

/**
 * The export room: a {@link ReliableSpanProcessor} for each chosen destination (OTLP, console,
 * an OTLP JSON file), behind one {@link SpanDestinations}, so that none waits for another's
 * retries: the file and the console get each batch as soon as it is ready while the collector
 * is down. `metrics` counts as exported what OTLP accepted (what the file or the console took
 * when there is no OTLP), and failures and drops of every destination. Logs, per destination,
 * once when export starts failing in a way worth retrying and once when it works again (not
 * per retry); the first permanent failure of each status once, with the reason; the first
 * `partial_success` rejection once, with the endpoint's message. A checkpoint receipt is given
 * back ({@link SpanExportOptions.onSpanDone}) once every destination is done with its span.
 */
export async function startSpanExport(options: SpanExportOptions): Promise<SpanExport> {
  const { config, metrics, log } = options;
  const chosen = await createSpanTransports(config, options.exporters ?? { otlp: true });
  const exporting = chosen[0]!.kind !== 'none';
  const counted = chosen.find(({ kind }) => kind === 'otlp') ?? chosen[0]!;
  const several = chosen.length > 1;
  // Set by the first destination's `onEnd` hook and read by the others', in the same call.
  let ending: SharedReceipt | undefined;
  const done = (batch: ExportBatch): void => {
    for (const kept of batch.kept as SharedReceipt[]) {
      kept.remaining -= 1;
      if (kept.remaining === 0) options.onSpanDone?.(kept.receipt);
    }
  };
  const destinations: SpanDestination[] = chosen.map((choice, index) => {
    let failing = false;
    let reportedRejection = false;
    const reportedStatuses = new Set<string>();
    const where = several ? ` to ${choice.description}` : '';
    const onEnd = options.onSpanEnded;
    const destination: SpanDestination = {
      kind: choice.kind,
      description: choice.description,
      refusal: undefined,
      processor: new ReliableSpanProcessor(choice.transport, {
        maxQueueSpans: options.maxQueueSpans,
        maxRetryAfterMs: config.maxRetryAfterMs,
        onStart: index === 0 ? options.onSpanStarted : undefined,
        onEnd:
          onEnd &&
          ((span: ReadableSpan) => {
            if (index === 0) {
              const receipt = onEnd(span);
              ending = receipt === undefined ? undefined : { receipt, remaining: chosen.length };
            }
            return ending;
          }),
        onExported: (spans, latencyMs, rejected) => {
          if (exporting && choice === counted) metrics.exported(spans.length - rejected, latencyMs);
          done(spans);
          if (failing) {
            failing = false;
            log(`tooltrace sidecar: export to ${choice.description} works again`);
          }
          options.onBatchExported?.();
        },
        onFailed: (reason, spans) => {
          metrics.exportFailed(spans);
          if (!failing) {
            failing = true;
            log(
              `tooltrace sidecar: export${where} failed (${reason}); retrying, nothing is dropped`,
            );
          }
        },
        onDropped: (spans, status, reason) => {
          metrics.dropped(status, spans.length);
          done(spans);
          destination.refusal ??= reason;
          if (!reportedStatuses.has(status)) {
            reportedStatuses.add(status);
            const named =
              spans.length === 0
                ? ''
                : `, ${spans.firstSpanName} (${spans.firstSpanId}) among them`;
            log(
              choice.kind === 'otlp'
                ? `tooltrace sidecar: export refused for good: ${reason}; ${withNoun(spans.length, 'span')} dropped${named} (not retried; counted in tooltrace_spans_dropped_total)`
                : `tooltrace sidecar: ${reason}; ${withNoun(spans.length, 'span')} not ${choice.kind === 'console' ? 'printed' : `written${where}`}${named} (counted in tooltrace_spans_dropped_total)`,
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
              `tooltrace sidecar: ${config.tracesUrl} accepted a batch but rejected ${withNoun(rejected, 'span')}: ${message === '' ? '(no message)' : message}`,
            );
          }
        },
      }),
    };
    return destination;
  });
  return {
    processor: new SpanDestinations(destinations),
    description: chosen.map(({ description }) => description).join(' and '),
    exporting,
  };
}
