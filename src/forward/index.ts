/**
 * Entry point `tooltrace/forward`: the agent side of sidecar mode. `forwardEvents` writes the
 * bus's events as NDJSON envelopes to a file or POSTs them to a sidecar. It depends on the bus
 * and the wire codec only: an agent that forwards loads no OpenTelemetry package at all.
 */
export { forwardEvents } from './forward-events.js';
export { ForwardError } from './forward-error.js';
export type { ForwardErrorKind } from './forward-error.js';
export type { ForwardOptions, Forwarder, ForwarderStats } from './forward-options.js';
