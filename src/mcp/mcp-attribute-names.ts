/**
 * The attribute names and values of the OpenTelemetry MCP conventions (semantic-conventions-genai
 * `docs/gen-ai/mcp.md`, Development status) that tooltrace writes, kept here rather than imported
 * from an unstable entry point.
 */

/** The JSON-RPC method: `tools/call`. */
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
/** The MCP session, when the transport has one (Streamable HTTP). */
export const ATTR_MCP_SESSION_ID = 'mcp.session.id';
/** The MCP protocol version in use. */
export const ATTR_MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
/** The JSON-RPC id of the request, as a string. */
export const ATTR_JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
/** The JSON-RPC error code of a failed request, as a string. */
export const ATTR_RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';
/** `pipe` for stdio, `tcp` for HTTP. */
export const ATTR_NETWORK_TRANSPORT = 'network.transport';
/** What the tool does, as the server describes it. */
export const ATTR_GEN_AI_TOOL_DESCRIPTION = 'gen_ai.tool.description';

/** The method of a tool call. */
export const METHOD_TOOLS_CALL = 'tools/call';
/** `error.type` of a `CallToolResult` with `isError`. */
export const ERROR_TYPE_TOOL_ERROR = 'tool_error';

/**
 * The id of the MCP task a call runs as. The MCP conventions name no task attribute yet, so it
 * is in tooltrace's namespace.
 */
export const ATTR_MCP_TASK_ID = 'tooltrace.mcp.task.id';
/** The task's last status: `working`, `input_required`, `completed`, `failed`, `cancelled`. */
export const ATTR_MCP_TASK_STATUS = 'tooltrace.mcp.task.status';
/** `true` once the task asked for input (`input_required`) at least once. */
export const ATTR_MCP_TASK_INPUT_REQUIRED = 'tooltrace.mcp.task.input_required';
/** `error.type` of a task that ended `failed`. */
export const ERROR_TYPE_TASK_FAILED = 'task_failed';
/** `error.type` of a task the server ended `cancelled` (not the caller). */
export const ERROR_TYPE_TASK_CANCELLED = 'task_cancelled';
/** `error.type` of a task still unfinished at the call's deadline (`taskDeadline` or its ttl). */
export const ERROR_TYPE_TASK_DEADLINE = 'task_deadline';
/** `tooltrace.mcp.task.polls`: how many `tasks/get` the call sent. */
export const ATTR_MCP_TASK_POLLS = 'tooltrace.mcp.task.polls';
