/**
 * The sidecar's export room: the reliable span processor and the span transports (OTLP over HTTP
 * and gRPC, the `--out` file, the console), and the metrics export. OTLP encoding is the otlp
 * room's.
 */
export { startSpanExport } from './span-export.js';
export type { ExportMetrics, SpanExport, SpanExportOptions } from './span-export.js';
export type { SpanExporters } from './span-transports.js';
export { SpanDestinations } from './span-destinations.js';
export type { SpanDestination, SpanDestinationKind } from './span-destinations.js';
export {
  ACCEPTED_EXPORTERS,
  describeExporters,
  resolveExporterSelection,
} from './exporter-selection.js';
export type {
  ExporterName,
  ExporterSelection,
  ExporterSelectionOverrides,
} from './exporter-selection.js';
export { ConsoleSpanExporter } from './console-span-exporter.js';
export { OtlpFileExporter } from './otlp-file-exporter.js';
export type { OtlpFileExporterOptions } from './otlp-file-exporter.js';
export { ReliableSpanProcessor } from './reliable-span-processor.js';
export type {
  ExportBatch,
  ReliableSpanProcessorOptions,
  ReliableSpanProcessorStats,
} from './reliable-span-processor.js';
export { createTraceExporter, MAX_DELAY_MS, resolveExportConfig } from './export-config.js';
export { parseHeaders, parseKeyValueList } from './key-value-list.js';
export { tooltraceNumberTypes } from './tooltrace-number-types.js';
export type { ExportConfig, ExportOverrides, OtlpProtocol } from './export-config.js';
export type { ExportTls } from './export-tls.js';
export { OtlpHttpSpanExporter } from './otlp-http-span-exporter.js';
export type { OtlpHttpSpanExporterOptions } from './otlp-http-span-exporter.js';
export { resolveMetricsExport, startMetricsExport } from './metrics-export.js';
export type { MetricsExport, MetricsExportConfig } from './metrics-export.js';
export { isRetryableHttpStatus } from './export-outcome.js';
// The gRPC exporter is not listed: it loads @grpc/grpc-js, which `createTraceExporter` imports
// only for `grpc`, so the sidecar starts without it otherwise.
export type { OtlpGrpcSpanExporterOptions } from './otlp-grpc-span-exporter.js';
export type { BatchTransport, ExportOutcome } from './export-outcome.js';
export type { SpanBatch } from '../../otlp/index.js';
