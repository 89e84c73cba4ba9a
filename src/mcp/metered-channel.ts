import type { ToolEventDetails } from '../streamtool/index.js';
import { ToolChannel } from '../streamtool/index.js';
import type { McpOperationEnding } from './mcp-operation-metrics.js';

/** `error.type` of a call its caller cancelled, as the tracer names it. */
const ERROR_TYPE_CANCELLED = 'cancelled';
/** `error.type` of a failure that names no kind, as the tracer names it. */
const ERROR_TYPE_OTHER = '_OTHER';

/**
 * A client call's channel that records the call's `mcp.client.operation.duration` as it ends,
 * whichever way: completed, failed (the failure's `error.type`), or closed by a cancel.
 */
export class MeteredChannel extends ToolChannel {
  readonly #record: (ending: McpOperationEnding) => void;
  readonly #signal: AbortSignal;

  constructor(capacity: number, record: (ending: McpOperationEnding) => void, signal: AbortSignal) {
    super({ capacity });
    this.#record = record;
    this.#signal = signal;
  }

  override complete(payload?: unknown, details: ToolEventDetails = {}): Promise<void> {
    this.#record({ callAttributes: this.annotations, attributes: details.attributes });
    return super.complete(payload, details);
  }

  override fail(error: unknown, details: ToolEventDetails = {}): Promise<void> {
    this.#record({
      callAttributes: this.annotations,
      attributes: details.attributes,
      errorType: details.errorType ?? ERROR_TYPE_OTHER,
    });
    return super.fail(error, details);
  }

  override close(): void {
    this.#record({
      callAttributes: this.annotations,
      errorType: this.#signal.aborted ? ERROR_TYPE_CANCELLED : undefined,
    });
    super.close();
  }
}
