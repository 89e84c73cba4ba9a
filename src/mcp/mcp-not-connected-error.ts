import { TooltraceError } from '../errors/index.js';

/**
 * `mcpTools` was given a client that is not connected (`reason: 'not-connected'`), or whose
 * initialize handshake did not finish in time (`'handshake-timeout'`): listing its tools then
 * would give none, or some.
 */
export class McpNotConnectedError extends TooltraceError {
  /** Why the client could not be used. */
  readonly reason: 'not-connected' | 'handshake-timeout';

  constructor(reason: 'not-connected' | 'handshake-timeout', message: string) {
    super(message);
    this.reason = reason;
  }
}
