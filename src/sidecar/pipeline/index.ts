/**
 * The sidecar's pipeline room: decode lines, replay them onto the sidecar's own bus, trace them
 * with the SDK's tracer provider, and track which lines a checkpoint may move past.
 */
export { EventPipeline } from './event-pipeline.js';
export type { EventPipelineOptions, LineSource } from './event-pipeline.js';
export type { IntakeOutcome } from './intake-outcome.js';
export { detectResource, detectResourceFromEnv } from './detect-resource.js';
export { printable } from './printable.js';
export { withoutUrlCredentials } from './url-credentials.js';
export { traceSidecarBus } from './sidecar-tracing.js';
export type { SidecarTracingChoices, SidecarTracingOptions } from './sidecar-tracing.js';
export { CheckpointTracker } from './checkpoint-tracker.js';
export { OffsetPins } from './offset-pins.js';
export { SidecarMetrics } from './sidecar-metrics.js';
export { scopedEventId, scopedSession, unscopedSession } from './client-scope.js';
export { RecentKeys } from './recent-keys.js';
export type { SidecarGauges } from './sidecar-metrics.js';
