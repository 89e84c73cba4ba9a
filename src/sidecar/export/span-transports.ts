import { ConsoleSpanExporter } from './console-span-exporter.js';
import { createTraceExporter, type ExportConfig } from './export-config.js';
import type { SpanBatch } from '../../otlp/index.js';
import type { BatchTransport } from './export-outcome.js';
import { FanOutTransport } from './fan-out-transport.js';
import type { Escape } from './format-span.js';
import { OtlpFileExporter, type OtlpFileExporterOptions } from './otlp-file-exporter.js';

/** Which span exporters to run, from the exporter selection and the command line. */
export interface SpanExporters {
  /** Over OTLP, as `config` says. */
  otlp: boolean;
  /** Readable blocks on this stream (`console`), input made safe by `escape`. */
  console?: { stream: NodeJS.WritableStream; escape: Escape } | undefined;
  /** OTLP JSON lines to a file (`--out`). */
  file?: OtlpFileExporterOptions | undefined;
}

/** The transport {@link createSpanTransport} made, and where it sends spans, for the logs. */
export interface SpanTransportChoice {
  readonly transport: BatchTransport;
  /** `http://collector:4318/v1/traces (http/protobuf), spans.jsonl (OTLP JSON lines)`. */
  readonly description: string;
  /** False when no exporter was chosen (`none`): spans are let go as they end. */
  readonly exporting: boolean;
}

/**
 * The one transport the `ReliableSpanProcessor` drives for `exporters`: one exporter as it is,
 * several behind a {@link FanOutTransport}, none as a transport that takes every batch and
 * keeps nothing. The file is opened here, so a path that cannot be written stops start-up.
 */
export async function createSpanTransport(
  config: ExportConfig,
  exporters: SpanExporters,
): Promise<SpanTransportChoice> {
  const transports: BatchTransport[] = [];
  const described: string[] = [];
  if (exporters.file !== undefined) {
    const file = await OtlpFileExporter.open(exporters.file);
    transports.push(file);
    described.push(file.description);
  }
  if (exporters.console !== undefined) {
    const console = new ConsoleSpanExporter(exporters.console.stream, exporters.console.escape);
    transports.push(console);
    described.push(console.description);
  }
  if (exporters.otlp) {
    try {
      transports.push(await createTraceExporter(config));
    } catch (error) {
      await Promise.all(transports.map((transport) => transport.shutdown()));
      throw error;
    }
    described.push(`${config.tracesUrl} (${config.protocol})`);
  }
  if (transports.length === 0) {
    return { transport: NO_EXPORT, description: 'nowhere', exporting: false };
  }
  return {
    transport: transports.length === 1 ? transports[0]! : new FanOutTransport(transports),
    description: described.join(' and '),
    exporting: true,
  };
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
  sendBatch: () => Promise.resolve({ kind: 'success', rejectedSpans: 0, rejectionMessage: '' }),
  releaseBatch: () => {},
  shutdown: () => Promise.resolve(),
};
