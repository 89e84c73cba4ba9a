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

/**
 * The 2.x line's local errors name their kind in text where the 1.x line gives the JSON-RPC code
 * of the same kind: those two are mapped to 1.x's numbers, so a timeout or a closed connection
 * has one `error.type` whichever line a client is of.
 */
const CODES_OF_SDK_ERRORS: Readonly<Record<string, number>> = {
  REQUEST_TIMEOUT: -32001,
  CONNECTION_CLOSED: -32000,
};

/** Characters of a text error code kept as `error.type`. */
const MAX_TEXT_CODE = 64;

/**
 * Ends a call's channel with a failed request: a JSON-RPC error's code is its `error.type` (and
 * `rpc.response.status_code`); a 2.x SDK error's text code is mapped to 1.x's number where there
 * is one, else kept as the `error.type` itself.
 */
export function failCall(channel: ToolChannel, error: unknown): Promise<void> {
  let code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const mapped = CODES_OF_SDK_ERRORS[code];
    if (mapped === undefined) {
      return /^[A-Z][A-Z0-9_]*$/.test(code) && code.length <= MAX_TEXT_CODE
        ? channel.fail(error, { errorType: code.toLowerCase() })
        : channel.fail(error);
    }
    code = mapped;
  }
  if (typeof code !== 'number') return channel.fail(error);
  const status = String(code);
  return channel.fail(error, {
    errorType: status,
    attributes: { [ATTR_RPC_RESPONSE_STATUS_CODE]: status },
  });
}
