/**
 * The sidecar's export room: the reliable span processor and the span transports (OTLP over HTTP
 * and gRPC, the `--out` file, the console), and the metrics export. OTLP encoding is the otlp
 * room's.
 */
export { startSpanExport } from './span-export.js';
export { SpanDestinations } from './span-destinations.js';
export type { SpanDestination, SpanDestinationKind } from './span-destinations.js';
export { resolveExporterSelection } from './exporter-selection.js';
export type { ExporterSelection } from './exporter-selection.js';
export { ConsoleSpanExporter } from './console-span-exporter.js';
export { OtlpFileExporter } from './otlp-file-exporter.js';
export { ReliableSpanProcessor } from './reliable-span-processor.js';
export type { ReliableSpanProcessorStats } from './reliable-span-processor.js';
export { createTraceExporter, MAX_DELAY_MS, resolveExportConfig } from './export-config.js';
export { parseKeyValueList } from './key-value-list.js';
export { tooltraceNumberTypes } from './tooltrace-number-types.js';
export type { ExportConfig } from './export-config.js';
export { OtlpHttpSpanExporter } from './otlp-http-span-exporter.js';
export { resolveMetricsExport, startMetricsExport } from './metrics-export.js';
// The gRPC exporter is not listed: it loads @grpc/grpc-js, which `createTraceExporter` imports
// only for `grpc`, so the sidecar starts without it otherwise.
export type { BatchTransport, ExportOutcome } from './export-outcome.js';
