import type { McpToolDefinition } from './mcp-tool-definition.js';

/** The longest tool name taken, in characters (MCP 2025-11-25: names SHOULD be 1 to 128). */
export const MAX_TOOL_NAME_CHARS = 128;
/** Refused tools one diagnostic names; the rest are counted. */
const NAMED_IN_DIAGNOSTIC = 5;
/** Characters of a refused name the diagnostic and {@link RefusedMcpTool.name} keep. */
const SHOWN_NAME_CHARS = 64;

/** Why `mcpTools` refused a tool the server listed. */
export type RefusedMcpToolReason =
  | 'duplicate name'
  | 'empty name'
  | 'name not a string'
  | 'name too long'
  | 'name has control characters'
  | 'input schema not an object schema'
  | 'not a tool object'
  | 'too many tools';

/** A tool `mcpTools` refused, and why. */
export interface RefusedMcpTool {
  /** Its name as listed (a string cut to 64 characters; `''` when it had none). */
  readonly name: string;
  /** Its position in the whole listing, every page counted, from 0. */
  readonly index: number;
  readonly reason: RefusedMcpToolReason;
}

/**
 * Sorts what a server's `tools/list` pages hold into tools that can be called safely and tools
 * refused: the first tool of a name is taken, a later one with the same name refused (two
 * plugins answering one name would send two `tools/call` for one `tool.invoke`); a name that is
 * not a string, empty, over 128 characters or holds control characters is refused (it could not
 * be wired or would garble spans and logs); so is a tool whose `inputSchema` is not a JSON
 * Schema object (`{ "type": "object", … }`, which MCP requires), and every tool past `maxTools`.
 */
export class CheckedToolList {
  readonly #maxTools: number;
  readonly #names = new Set<string>();
  readonly #refused: RefusedMcpTool[] = [];
  #listed = 0;

  constructor(maxTools: number) {
    this.#maxTools = maxTools;
  }

  /** Takes the next listed entry: the definition when it can be called, else `undefined`. */
  take(entry: unknown): McpToolDefinition | undefined {
    const index = this.#listed++;
    const reason = this.#problemWith(entry);
    if (reason === undefined) {
      const definition = entry as McpToolDefinition;
      this.#names.add(definition.name);
      return definition;
    }
    const name = (entry as { name?: unknown } | null)?.name;
    this.#refused.push({
      name: typeof name === 'string' ? name.slice(0, SHOWN_NAME_CHARS) : '',
      index,
      reason,
    });
    return undefined;
  }

  /** The tools refused so far. */
  get refused(): readonly RefusedMcpTool[] {
    return this.#refused;
  }

  /** One line that says what was refused: the first few by name and reason, the rest counted. */
  diagnostic(): string | undefined {
    const refused = this.#refused;
    if (refused.length === 0) return undefined;
    const named = refused
      .slice(0, NAMED_IN_DIAGNOSTIC)
      .map((tool) => `#${tool.index} ${JSON.stringify(tool.name)} (${tool.reason})`)
      .join(', ');
    const more = refused.length - NAMED_IN_DIAGNOSTIC;
    return (
      `tooltrace: mcpTools refused ${refused.length} of the ${this.#listed} tools the server ` +
      `listed: ${named}${more > 0 ? ` and ${more} more` : ''}`
    );
  }

  #problemWith(entry: unknown): RefusedMcpToolReason | undefined {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      return 'not a tool object';
    }
    const { name, inputSchema } = entry as { name?: unknown; inputSchema?: unknown };
    if (typeof name !== 'string') return 'name not a string';
    if (name === '') return 'empty name';
    if (name.length > MAX_TOOL_NAME_CHARS) return 'name too long';
    // eslint-disable-next-line no-control-regex -- control characters are what is refused
    if (/[\u0000-\u001f\u007f]/.test(name)) return 'name has control characters';
    if (this.#names.has(name)) return 'duplicate name';
    if (
      inputSchema === null ||
      typeof inputSchema !== 'object' ||
      Array.isArray(inputSchema) ||
      (inputSchema as { type?: unknown }).type !== 'object'
    ) {
      return 'input schema not an object schema';
    }
    if (this.#names.size >= this.#maxTools) return 'too many tools';
    return undefined;
  }
}
