/**
 * The `network.transport` of an MCP transport: `tcp` for the HTTP transports (they set the
 * protocol version on every request, or handle HTTP requests), `pipe` for stdio (the client's
 * has a child `pid`, the server's holds stdin and stdout), else `undefined` (in-memory, custom).
 * Told by shape rather than `instanceof`, which would load every transport's code (child process
 * spawning, an HTTP server, an event source) for a user who needs one.
 */
export function networkTransportOf(transport: unknown): string | undefined {
  if (transport === null || typeof transport !== 'object') return undefined;
  const shape = transport as Record<string, unknown>;
  if (typeof shape.setProtocolVersion === 'function' || typeof shape.handleRequest === 'function') {
    return 'tcp';
  }
  if ('pid' in shape || ('_stdin' in shape && '_stdout' in shape)) return 'pipe';
  return undefined;
}
