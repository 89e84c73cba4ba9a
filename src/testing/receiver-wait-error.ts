import { TooltraceError } from '../errors/index.js';

/**
 * Rejects a receiver's `waitForSpans`/`waitForLogs`/`waitForRequests` when fewer items than
 * expected arrived before the timeout (`reason: 'timeout'`) or before the receiver was closed
 * (`reason: 'closed'`). The message says how many arrived and what the receiver answered.
 */
export class ReceiverWaitError extends TooltraceError {
  readonly reason: 'timeout' | 'closed';
  /** What was waited for: `spans`, `log records` or `requests`. */
  readonly what: string;
  readonly expected: number;
  readonly received: number;

  constructor(
    message: string,
    fields: { reason: 'timeout' | 'closed'; what: string; expected: number; received: number },
  ) {
    super(message);
    this.reason = fields.reason;
    this.what = fields.what;
    this.expected = fields.expected;
    this.received = fields.received;
  }
}
