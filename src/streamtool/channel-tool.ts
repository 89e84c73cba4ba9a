import type { ToolContext } from './tool-context.js';
import type { ToolEvent } from './tool-event.js';

/**
 * A tool that publishes output while it runs. `stream` starts one call and returns its events,
 * ending with a `complete` or an `error` event; an async generator function is the natural way to
 * write it, a `ToolChannel` the way for tools driven by callbacks. The tool should stop when
 * `signal` aborts; `bridge` closes the iterator (`return()`) once it stops reading, so a
 * generator's `finally` blocks run. `context` is what the caller offers beyond that (a way to ask
 * for input mid-stream, when the caller can carry the question; see {@link ToolContext}).
 */
export interface ChannelTool {
  /** The tool name as it appears in the catalog; stream payloads carry it as `tool_name`. */
  readonly name: string;
  stream(
    signal: AbortSignal,
    input: Record<string, unknown>,
    context?: ToolContext,
  ): AsyncIterable<ToolEvent> | Promise<AsyncIterable<ToolEvent>>;
}
