import { setTimeout as sleep } from 'node:timers/promises';
import type { McpClient } from './mcp-client.js';
import { McpNotConnectedError } from './mcp-not-connected-error.js';

/** How often the wait looks whether a connecting client finished its handshake. */
const POLL_MS = 5;

interface ErrorReportingTransport {
  onerror?: ((error: Error) => void) | undefined;
}

/**
 * Resolves once `client` finished its initialize handshake. A client never connected is refused
 * at once (`not-connected`); one whose `connect()` is still running is waited for, up to
 * `timeout` milliseconds (`handshake-timeout`), unless its connection fails first: the transport
 * reporting an error or closing before the handshake is a failed `connect()`, refused at once
 * (`connection-failed`, the transport's error as the cause). The wait keeps the process alive:
 * its caller awaits it, and a failed `connect()` may leave nothing else running.
 */
export async function awaitHandshake(client: McpClient, timeout: number): Promise<void> {
  if (client.getServerCapabilities() !== undefined) return;
  const transport = client.transport as ErrorReportingTransport | undefined;
  if (transport === undefined) {
    throw new McpNotConnectedError(
      'not-connected',
      'the MCP client is not connected: await client.connect(transport) before mcpTools(client)',
    );
  }
  // connect() was called and not awaited: its handshake is on the way, or its connection failed.
  let transportError: Error | undefined;
  const previous = transport.onerror;
  const watch = (error: Error): void => {
    transportError ??= error;
    previous?.call(transport, error);
  };
  transport.onerror = watch;
  try {
    const deadline = Date.now() + timeout;
    while (client.getServerCapabilities() === undefined) {
      if (transportError !== undefined || client.transport !== transport) {
        throw connectionFailed(transportError);
      }
      if (Date.now() >= deadline) {
        throw new McpNotConnectedError(
          'handshake-timeout',
          `the MCP client did not finish its initialize handshake within ${timeout} ms (did ` +
            'client.connect(transport) fail?): await client.connect(transport) before mcpTools(client)',
        );
      }
      await sleep(POLL_MS);
    }
  } finally {
    // Put back unless something replaced it meanwhile (then ours is no longer called anyway).
    if (transport.onerror === watch) transport.onerror = previous;
  }
}

function connectionFailed(cause: Error | undefined): McpNotConnectedError {
  const why =
    cause === undefined ? 'its transport closed' : `its transport failed: ${cause.message}`;
  return new McpNotConnectedError(
    'connection-failed',
    `the MCP client's connect() failed before its initialize handshake finished (${why}): ` +
      'await client.connect(transport) to see why, before mcpTools(client)',
    cause === undefined ? undefined : { cause },
  );
}
