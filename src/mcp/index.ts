export { mcpTools } from './mcp-tools.js';
export type { McpChannelTool, McpToolsOptions } from './mcp-tools.js';
export { serveMcpTools } from './serve-mcp-tools.js';
export type { McpServedTool, ServeMcpToolsOptions } from './serve-mcp-tools.js';
export { McpToolError } from './mcp-tool-error.js';
