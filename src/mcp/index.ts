export { mcpTools } from './mcp-tools.js';
export type { McpChannelTool, McpToolsOptions } from './mcp-tools.js';
export { serveMcpTools } from './serve-mcp-tools.js';
export type { ServeMcpToolsOptions } from './serve-mcp-tools.js';
export type { McpServedTool } from './served-tool.js';
export { McpToolError } from './mcp-tool-error.js';
export { McpNotConnectedError } from './mcp-not-connected-error.js';
export type { McpClient } from './mcp-client.js';
export type { McpToolDefinition } from './mcp-tool-definition.js';
