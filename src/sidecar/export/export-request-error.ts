import { TooltraceError } from '../../errors/index.js';

/**
 * An OTLP export request that did not succeed: the endpoint answered with a status other than
 * 2xx (`code`), or the request failed on the way (`code` undefined, `cause` says why).
 * `retryable` says whether OTLP allows sending the same request again; `retryAfterMs` carries
 * the endpoint's `Retry-After`, so the sender waits at least that long.
 */
export class ExportRequestError extends TooltraceError {
  /** HTTP status of the answer, `undefined` when there was none. */
  readonly code: number | undefined;
  /** Whether the request may be sent again (429, 502, 503, 504, network errors). */
  readonly retryable: boolean;
  /** How long the endpoint asked to wait before the next attempt, when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: { code?: number; retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.retryable = options.retryable ?? options.code === undefined;
    this.retryAfterMs = options.retryAfterMs;
  }
}
