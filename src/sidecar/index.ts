export { runSidecar } from './run-sidecar.js';
export type { Sidecar } from './run-sidecar.js';
export type { SidecarOptions } from './sidecar-options.js';
export { SidecarMetrics } from './pipeline/index.js';
export { ReliableSpanProcessor } from './export/index.js';
export type { ReliableSpanProcessorOptions, ReliableSpanProcessorStats } from './export/index.js';
export {
  createTraceExporter,
  parseHeaders,
  parseKeyValueList,
  resolveExportConfig,
} from './export/index.js';
export type { ExportConfig, ExportOverrides, OtlpProtocol } from './export/index.js';
export { OtlpHttpSpanExporter } from './export/index.js';
export type { OtlpHttpSpanExporterOptions } from './export/index.js';
export { ExportRequestError } from './export/index.js';
export { isLoopbackHost, parseListenAddress } from './intake/index.js';
export type { ListenAddress } from './intake/index.js';
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
