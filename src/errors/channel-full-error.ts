import { TooltraceError } from './tooltrace-error.js';

/**
 * A producer kept pushing into a full `ToolChannel` without awaiting the promises its pushes
 * returned, until as many pushes were waiting for room as the channel holds. The bound keeps a
 * producer that ignores backpressure from growing memory without limit.
 */
export class ChannelFullError extends TooltraceError {
  /** The channel's capacity; as many pushes were already waiting. */
  readonly capacity: number;

  constructor(capacity: number) {
    super(
      `the channel is full (capacity ${capacity}) and ${capacity} pushes are already waiting: ` +
        'await the promise each push returns before pushing again',
    );
    this.capacity = capacity;
  }
}
