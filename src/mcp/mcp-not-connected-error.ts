import { TooltraceError } from '../errors/index.js';

/**
 * `mcpTools` was given a client that is not connected (`reason: 'not-connected'`), whose
 * `connect()` failed while it waited for the handshake (`'connection-failed'`: the transport
 * closed or reported an error, which is the `cause`), or whose initialize handshake did not
 * finish in time (`'handshake-timeout'`): listing its tools then would give none, or some.
 */
export class McpNotConnectedError extends TooltraceError {
  /** Why the client could not be used. */
  readonly reason: 'not-connected' | 'connection-failed' | 'handshake-timeout';

  constructor(
    reason: 'not-connected' | 'connection-failed' | 'handshake-timeout',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.reason = reason;
  }
}
