/**
 * What `serveMcpTools` needs of an MCP server: the `McpServer` of either SDK line
 * (`@modelcontextprotocol/sdk/server/mcp.js` 1.x, `@modelcontextprotocol/server` 2.x), before it
 * connects. Described by shape, as `McpClient` is, so a project with one line installed
 * type-checks without the other's declarations.
 */
export interface McpToolServer {
  /** Both lines take `(name, config, callback)`; the callback's context differs by line. */
  registerTool(name: string, config: never, callback: never): McpRegisteredTool;
  /** The low-level server: its transport tells `network.transport`. */
  readonly server: { readonly transport?: unknown };
}

/** A tool as `McpServer.registerTool` returns it, on either line: what tooltrace passes on. */
export interface McpRegisteredTool {
  /** Whether clients see and may call the tool. */
  readonly enabled: boolean;
  /** Lists the tool again (clients are told the list changed). */
  enable(): void;
  /** Hides the tool from clients until `enable()`. */
  disable(): void;
  /** Unregisters the tool. */
  remove(): void;
}

/** A `CallToolResult`, as either line's tool handler returns it. */
export interface McpCallToolResult {
  content: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** Hints for clients about a tool (MCP `ToolAnnotations`), passed on as they are. */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}
