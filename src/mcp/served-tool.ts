import type { ToolCall } from '../events/index.js';
import type { ChannelTool, ToolContext, ToolEvent } from '../streamtool/index.js';
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
   * Whether calls run as MCP tasks: `required` (only as a task) or `optional` (either way). On a
   * 1.x `McpServer` the 2025-11-25 tasks of its `registerToolTask` (the server created with a
   * `taskStore` and the `tasks` capability for `tools/call`); on a 2.x one the 2026-07-28 tasks
   * extension (`io.modelcontextprotocol/tasks`) for clients that declare it, declared by the
   * server when it is not connected yet.
   * @default plain calls only
   */
  execution?: { taskSupport: 'optional' | 'required' };
}

/** A served call that is running. */
export interface ServedCall {
  readonly call: ToolCall;
  readonly relay: StreamRelay;
  readonly result: Promise<McpCallToolResult>;
  /** What the call failed with, once `result` resolved with `isError` because it failed. */
  failure?: unknown;
}

/** Where a served call's stream goes: the client's progress notifications, a task's status. */
export interface StreamListener {
  progress(fraction: number, payload: unknown): Promise<void>;
  partial(payload: unknown): Promise<void>;
}

/**
 * The served tool as bridge runs it: every event passes through unchanged, and the stream is
 * sent to the client on the way (awaited, so a slow client slows the tool rather than piling up
 * notifications). With a `context` the tool gets it as the third argument of `stream()`, and the
 * events of its input rounds ({@link StreamRelay.inputEvent}) join its own, in order, while the
 * tool waits for an answer (they are not sent to the client as progress).
 */
export class StreamRelay implements ChannelTool {
  readonly name: string;
  /** The final payload: `complete`'s, or the last partial's when the stream just ends. */
  output: unknown;
  readonly #tool: ChannelTool;
  readonly #context: ToolContext | undefined;
  readonly #listeners: StreamListener[] = [];
  readonly #inputEvents: ToolEvent[] = [];
  #wake: (() => void) | undefined;

  constructor(tool: ChannelTool, context?: ToolContext) {
    this.name = tool.name;
    this.#tool = tool;
    this.#context = context;
  }

  /** Sends the stream to `listener` too, from the next event on. */
  listen(listener: StreamListener): void {
    this.#listeners.push(listener);
  }

  /** An event of an input round (a question, an answer), for the call's stream. */
  inputEvent(event: ToolEvent): void {
    this.#inputEvents.push(event);
    this.#wake?.();
  }

  async *stream(signal: AbortSignal, input: Record<string, unknown>): AsyncGenerator<ToolEvent> {
    const iterable = await (this.#context === undefined
      ? this.#tool.stream(signal, input)
      : this.#tool.stream(signal, input, this.#context));
    if (this.#context === undefined) {
      for await (const event of iterable) yield await this.#relay(event);
      return;
    }
    // The tool may be waiting for an answer while its round's events wait here: read both.
    const iterator = iterable[Symbol.asyncIterator]();
    let next: Promise<IteratorResult<ToolEvent>> | undefined;
    try {
      for (;;) {
        while (this.#inputEvents.length > 0) yield this.#inputEvents.shift()!;
        next ??= iterator.next();
        const woken = new Promise<'input'>((resolve) => {
          this.#wake = () => resolve('input');
        });
        const step = await Promise.race([next, woken]);
        this.#wake = undefined;
        if (step === 'input') continue;
        next = undefined;
        if (step.done === true) break;
        // An answer's event comes before what the tool did with the answer.
        while (this.#inputEvents.length > 0) yield this.#inputEvents.shift()!;
        yield await this.#relay(step.value);
      }
      while (this.#inputEvents.length > 0) yield this.#inputEvents.shift()!;
    } finally {
      // Queued behind a tool still waiting for an answer; its finally blocks run when it resumes.
      void Promise.resolve(iterator.return?.()).catch(() => {});
    }
  }

  async #relay(event: ToolEvent): Promise<ToolEvent> {
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
    return event;
  }
}
