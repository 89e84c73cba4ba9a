import type { ToolCall } from '../events/index.js';
import type { ChannelTool, ToolEvent } from '../streamtool/index.js';
import type { McpCallToolResult, McpToolAnnotations } from './mcp-tool-server.js';

/** A {@link ChannelTool} with what an MCP client is told about it. */
export interface McpServedTool {
  /** The tool; its `name` is the name clients call it by. */
  tool: ChannelTool;
  /** A human-readable name for clients' lists. */
  title?: string;
  /** What the tool does, for the model; also the span's `gen_ai.tool.description`. */
  description?: string;
  /**
   * The arguments, as the server's `registerTool` takes them: a Zod object or a raw shape of Zod
   * types (`{ folder: z.string() }`), on the 2.x line any Standard Schema with JSON Schema too.
   * Clients see it as the tool's JSON Schema, and calls are checked against it. Without one, the
   * tool is listed as taking no arguments and receives `{}`. Typed by shape (`object`) so that
   * neither SDK line's declarations are needed; the SDK checks it when the tool is registered.
   */
  inputSchema?: object;
  /** Hints for clients (`readOnlyHint`, `destructiveHint`, …), passed on as they are. */
  annotations?: McpToolAnnotations;
  /**
   * Whether calls run as MCP tasks (2025-11-25), as the 1.x SDK's `registerToolTask` takes it:
   * `required` (only as a task) or `optional` (either way). Needs an `McpServer` created with a
   * `taskStore` and the `tasks` capability for `tools/call`.
   * @default plain calls only
   */
  execution?: { taskSupport: 'optional' | 'required' };
}

/** A served call that is running. */
export interface ServedCall {
  readonly call: ToolCall;
  readonly relay: StreamRelay;
  readonly result: Promise<McpCallToolResult>;
}

/** Where a served call's stream goes: the client's progress notifications, a task's status. */
export interface StreamListener {
  progress(fraction: number, payload: unknown): Promise<void>;
  partial(payload: unknown): Promise<void>;
}

/**
 * The served tool as bridge runs it: every event passes through unchanged, and the stream is
 * sent to the client on the way (awaited, so a slow client slows the tool rather than piling up
 * notifications).
 */
export class StreamRelay implements ChannelTool {
  readonly name: string;
  /** The final payload: `complete`'s, or the last partial's when the stream just ends. */
  output: unknown;
  readonly #tool: ChannelTool;
  readonly #listeners: StreamListener[] = [];

  constructor(tool: ChannelTool) {
    this.name = tool.name;
    this.#tool = tool;
  }

  /** Sends the stream to `listener` too, from the next event on. */
  listen(listener: StreamListener): void {
    this.#listeners.push(listener);
  }

  async *stream(signal: AbortSignal, input: Record<string, unknown>): AsyncGenerator<ToolEvent> {
    for await (const event of await this.#tool.stream(signal, input)) {
      if (event?.kind === 'progress') {
        for (const listener of this.#listeners) {
          await listener.progress(event.progress ?? -1, event.payload);
        }
      } else if (event?.kind === 'partial') {
        this.output = event.payload;
        for (const listener of this.#listeners) await listener.partial(event.payload);
      } else if (event?.kind === 'complete') {
        this.output = event.payload;
      }
      yield event;
    }
  }
}
