/**
 * The sidecar's intake room: standard input, followed files (`tail -F`, with checkpoints) and
 * HTTP (`POST /v1/events` with bearer tokens, probes, `/metrics`).
 */
export { Intakes } from './intakes.js';
export type { IntakeSettings, IntakesOptions } from './intakes.js';
export { StdinSource } from './stdin-source.js';
export type { StdinSourceOptions } from './stdin-source.js';
export { FollowedFile } from './followed-file.js';
export type { FollowedFileOptions } from './followed-file.js';
export { FileTailer } from './file-tailer.js';
export type { FileTailerOptions, TailOpenReason, TailStart } from './file-tailer.js';
export { FINGERPRINT_BYTES, fingerprintOf } from './file-fingerprint.js';
export type { FileFingerprint } from './file-fingerprint.js';
export { CheckpointFile } from './checkpoint-file.js';
export type { Checkpoint } from './checkpoint-file.js';
export { HttpIntake } from './http-intake.js';
export { HTTP_INTAKE_DEFAULTS } from './http-intake-options.js';
export { ClientTokens, DEFAULT_CLIENT, parseClientToken, parseTokenFile } from './client-tokens.js';
export type { ClientToken } from './client-tokens.js';
export { ConnectionLimiter } from './connection-limiter.js';
export type {
  HttpIntakeLimits,
  HttpIntakeMetrics,
  HttpIntakeOptions,
} from './http-intake-options.js';
export type { ConnectionObserver } from './connection-limiter.js';
export { isLoopbackHost, parseListenAddress } from './listen-address.js';
export type { ListenAddress } from './listen-address.js';
