/**
 * A tool as `tools/list` describes it, on either SDK line: the fields tooltrace reads, and
 * whatever else the server sent.
 */
export interface McpToolDefinition {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly annotations?: unknown;
  /**
   * MCP 2025-11-25: whether the tool runs as a task: `forbidden` (also when absent), `optional`
   * or `required`.
   */
  readonly execution?: { readonly taskSupport?: string };
  readonly [key: string]: unknown;
}
