import { TooltraceError } from '../errors/index.js';

/**
 * An MCP tool answered with a `CallToolResult` marked `isError`: the call reached the tool and
 * the tool failed. The message is the result's text content; `content` is all of it.
 */
export class McpToolError extends TooltraceError {
  /** The tool that failed. */
  readonly toolName: string;
  /** The result's `content`, as the server sent it. */
  readonly content: readonly unknown[];

  constructor(toolName: string, content: readonly unknown[]) {
    super(textOf(content) || `MCP tool "${toolName}" failed without a message`);
    this.toolName = toolName;
    this.content = content;
  }
}

/** The text items of a result's content, one line each. */
export function textOf(content: readonly unknown[]): string {
  const lines: string[] = [];
  for (const item of content) {
    const text = (item as { type?: unknown; text?: unknown } | null)?.text;
    if ((item as { type?: unknown } | null)?.type === 'text' && typeof text === 'string') {
      lines.push(text);
    }
  }
  return lines.join('\n');
}
