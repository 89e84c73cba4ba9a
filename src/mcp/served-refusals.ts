import type { McpCallToolResult } from './mcp-tool-server.js';

/**
 * JSON-RPC errors for served tool calls. The `McpServer` of both SDK lines turns whatever a tool's
 * callback throws into a `CallToolResult` with `isError`; MCP 2026-07-28 wants some refusals as
 * JSON-RPC errors (`-32021` for a capability the client did not declare, `-32602` for a
 * `requestState` that fails its integrity check). A callback records the refusal against its
 * request here and returns the `isError` result; the server's `tools/call` handler, wrapped once
 * per server, throws the recorded error instead, which the SDK sends as the request's error. On a
 * line that keeps its handlers elsewhere the `isError` result goes out as it is.
 */

/** A refusal: what the SDK needs to answer with a JSON-RPC error. */
export interface Refusal extends Error {
  readonly code: number | undefined;
  readonly data?: Record<string, unknown> | undefined;
}

const refusals = new WeakMap<object, Refusal>();
const wrapped = new WeakSet<object>();

type Handler = (request: unknown, context: { mcpReq?: object }) => Promise<unknown>;

/** Records `error` as the answer to the request `handle` stands for; returns the fallback. */
export function refuse(handle: object | undefined, error: Refusal): McpCallToolResult {
  if (handle !== undefined && error.code !== undefined) refusals.set(handle, error);
  return { content: [{ type: 'text', text: error.message }], isError: true };
}

/** Wraps `protocol`'s `tools/call` handler (once) to throw the refusals recorded for requests. */
export function answerRefusals(protocol: unknown): void {
  const handlers = (protocol as { _requestHandlers?: unknown } | null)?._requestHandlers;
  if (!(handlers instanceof Map) || wrapped.has(protocol as object)) return;
  const handle = handlers.get('tools/call') as Handler | undefined;
  if (typeof handle !== 'function') return;
  wrapped.add(protocol as object);
  handlers.set('tools/call', async (request: unknown, context: { mcpReq?: object }) => {
    const result = await handle(request, context);
    const refusal = context?.mcpReq === undefined ? undefined : refusals.get(context.mcpReq);
    if (refusal !== undefined) throw refusal;
    return result;
  });
}
