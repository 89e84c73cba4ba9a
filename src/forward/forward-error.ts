import { TooltraceError } from '../errors/index.js';

/**
 * What went wrong with forwarding: `unreachable` (no answer: the sidecar is down, the address
 * wrong, or it did not answer within `requestTimeoutMs`; retried), `unavailable` (a 5xx answer;
 * retried), `refused` (a 4xx other than 429: those events are dropped for good), `dropped` (the
 * queue was full, or an event could not be encoded) and `gave-up` (`close()` reached its timeout
 * with events still unsent).
 */
export type ForwardErrorKind = 'unreachable' | 'unavailable' | 'refused' | 'dropped' | 'gave-up';

/**
 * A forwarding problem, as {@link ForwardOptions.onError} hears it: each kind (and each HTTP
 * status) once per forwarder, however often it happens; `stats()` counts every occurrence.
 */
export class ForwardError extends TooltraceError {
  /** What went wrong. */
  readonly kind: ForwardErrorKind;
  /** The sidecar's HTTP status, when it answered. */
  readonly status: number | undefined;
  /** How many events it concerns (the batch, or those left at `close()`). */
  readonly events: number;

  constructor(
    message: string,
    options: { kind: ForwardErrorKind; status?: number; events: number; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
    this.status = options.status;
    this.events = options.events;
  }
}
