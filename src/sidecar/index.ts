/**
 * Entry point `tooltrace/sidecar`: `runSidecar`, the process `tooltrace sidecar` runs (intake,
 * pipeline, export), for embedding it or testing against it. It loads the OpenTelemetry SDK and
 * exporter; an agent that only forwards its events imports `tooltrace/forward` instead.
 */
export { runSidecar } from './run-sidecar.js';
export type { Sidecar } from './run-sidecar.js';
export type { SidecarOptions } from './sidecar-options.js';
export type { HttpIntakeLimits } from './intake/index.js';
export type { SidecarTracingChoices } from './pipeline/index.js';
export { SIDECAR_EXIT_CODE } from './sidecar-exit-code.js';
export { SidecarMetrics } from './pipeline/index.js';
export type { SidecarGauges } from './pipeline/index.js';
