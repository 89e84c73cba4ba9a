export { runSidecar } from './run-sidecar.js';
export type { Sidecar } from './run-sidecar.js';
export type { SidecarOptions } from './sidecar-options.js';
export { SidecarMetrics } from './sidecar-metrics.js';
export { ReliableSpanProcessor } from './reliable-span-processor.js';
export type {
  ReliableSpanProcessorOptions,
  ReliableSpanProcessorStats,
} from './reliable-span-processor.js';
export {
  createTraceExporter,
  parseHeaders,
  parseKeyValueList,
  resolveExportConfig,
} from './export-config.js';
export type { ExportConfig, ExportOverrides, OtlpProtocol } from './export-config.js';
export { OtlpHttpSpanExporter } from './otlp-http-span-exporter.js';
export type { OtlpHttpSpanExporterOptions } from './otlp-http-span-exporter.js';
export { ExportRequestError } from './export-request-error.js';
export { isLoopbackHost, parseListenAddress } from './listen-address.js';
export type { ListenAddress } from './listen-address.js';
export {
  decodeEnvelope,
  encodeEnvelope,
  LineSplitter,
  REJECT_REASONS,
  DECODE_WARNINGS,
} from '../wire/index.js';
export type {
  DecodeFailure,
  DecodeOptions,
  DecodeResult,
  DecodeSuccess,
  DecodeWarning,
  EncodeOptions,
  LineSplitterOptions,
  RejectReason,
} from '../wire/index.js';
