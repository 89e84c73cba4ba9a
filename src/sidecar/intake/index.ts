/**
 * The sidecar's intake room: standard input, followed files (`tail -F`, with checkpoints) and
 * HTTP (`POST /v1/events` with bearer tokens, probes, `/metrics`).
 */
export { Intakes } from './intakes.js';
export type { IntakeSettings } from './intakes.js';
export { FollowedFile } from './followed-file.js';
export { fingerprintOf } from './file-fingerprint.js';
export { CheckpointFile } from './checkpoint-file.js';
export { HttpIntake } from './http-intake.js';
export { ClientTokens, parseClientToken } from './client-tokens.js';
export type { ClientToken } from './client-tokens.js';
export type { HttpIntakeLimits } from './http-intake-options.js';
export { isLoopbackHost, parseListenAddress } from './listen-address.js';
