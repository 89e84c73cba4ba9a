import type { ToolChannel } from '../streamtool/index.js';
import { ATTR_RPC_RESPONSE_STATUS_CODE, ERROR_TYPE_TOOL_ERROR } from './mcp-attribute-names.js';
import { McpToolError } from './mcp-tool-error.js';

/** Ends a call's channel with the `CallToolResult` the server answered. */
export function settleCall(channel: ToolChannel, toolName: string, answer: unknown): Promise<void> {
  const result = (answer ?? {}) as {
    content?: unknown;
    structuredContent?: unknown;
    isError?: unknown;
  };
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  if (result.isError === true) {
    return channel.fail(new McpToolError(toolName, content), { errorType: ERROR_TYPE_TOOL_ERROR });
  }
  const payload: { content: unknown[]; structuredContent?: unknown } = { content };
  if (result.structuredContent !== undefined) payload.structuredContent = result.structuredContent;
  return channel.complete(payload);
}

/** Ends a call's channel with a failed request: a JSON-RPC error's code is its `error.type`. */
export function failCall(channel: ToolChannel, error: unknown): Promise<void> {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'number') return channel.fail(error);
  const status = String(code);
  return channel.fail(error, {
    errorType: status,
    attributes: { [ATTR_RPC_RESPONSE_STATUS_CODE]: status },
  });
}
