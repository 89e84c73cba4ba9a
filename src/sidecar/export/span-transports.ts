import { ConsoleSpanExporter } from './console-span-exporter.js';
import { createTraceExporter, type ExportConfig } from './export-config.js';
import type { SpanBatch } from '../../otlp/index.js';
import type { BatchTransport } from './export-outcome.js';
import type { Escape } from './format-span.js';
import { OtlpFileExporter, type OtlpFileExporterOptions } from './otlp-file-exporter.js';
import type { SpanDestinationKind } from './span-destinations.js';

/** Which span exporters to run, from the exporter selection and the command line. */
export interface SpanExporters {
  /** Over OTLP, as `config` says. */
  otlp: boolean;
  /** Readable blocks on this stream (`console`), input made safe by `escape`. */
  console?: { stream: NodeJS.WritableStream; escape: Escape } | undefined;
  /** OTLP JSON lines to a file (`--out`). */
  file?: OtlpFileExporterOptions | undefined;
}

/** One transport {@link createSpanTransports} made, and where it sends spans, for the logs. */
export interface SpanTransportChoice {
  readonly kind: SpanDestinationKind;
  readonly transport: BatchTransport;
  /** `http://collector:4318/v1/traces (http/protobuf)`, `spans.jsonl (OTLP JSON lines)`. */
  readonly description: string;
}

/**
 * A transport for each of `exporters`, local ones first (the file, then standard output), each
 * to be driven by a `ReliableSpanProcessor` of its own; none chosen (`none`) gives one transport
 * that takes every batch and keeps nothing. The file is opened here, so a path that cannot be
 * written stops start-up.
 */
export async function createSpanTransports(
  config: ExportConfig,
  exporters: SpanExporters,
): Promise<SpanTransportChoice[]> {
  const chosen: SpanTransportChoice[] = [];
  if (exporters.file !== undefined) {
    const file = await OtlpFileExporter.open(exporters.file);
    chosen.push({ kind: 'file', transport: file, description: file.description });
  }
  if (exporters.console !== undefined) {
    const console = new ConsoleSpanExporter(exporters.console.stream, exporters.console.escape);
    chosen.push({ kind: 'console', transport: console, description: console.description });
  }
  if (exporters.otlp) {
    try {
      chosen.push({
        kind: 'otlp',
        transport: await createTraceExporter(config),
        description: `${config.tracesUrl} (${config.protocol})`,
      });
    } catch (error) {
      await Promise.all(chosen.map(({ transport }) => transport.shutdown()));
      throw error;
    }
  }
  if (chosen.length === 0) {
    return [{ kind: 'none', transport: NO_EXPORT, description: 'nowhere' }];
  }
  return chosen;
}

/** `OTEL_TRACES_EXPORTER=none`: every batch taken, nothing kept. */
const NO_EXPORT: BatchTransport<number> = {
  openBatch(): SpanBatch<number> {
    let size = 0;
    return {
      get size() {
        return size;
      },
      bytes: 0,
      add: () => void (size += 1),
      close: () => size,
    };
  },
  send: () => Promise.resolve({ kind: 'success', rejectedSpans: 0, rejectionMessage: '' }),
  releaseBatch: () => {},
  shutdown: () => Promise.resolve(),
};
