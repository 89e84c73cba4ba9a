import type { ToolEvent } from './tool-event.js';

/**
 * A tool that publishes output while it runs. `stream` starts one call and returns its events,
 * ending with a `complete` or an `error` event; an async generator function is the natural way to
 * write it, a `ToolChannel` the way for tools driven by callbacks. The tool should stop when
 * `signal` aborts; `bridge` closes the iterator (`return()`) once it stops reading, so a
 * generator's `finally` blocks run.
 */
export interface ChannelTool {
  /** The tool name as it appears in the catalog; stream payloads carry it as `tool_name`. */
  readonly name: string;
  stream(
    signal: AbortSignal,
    input: Record<string, unknown>,
  ): AsyncIterable<ToolEvent> | Promise<AsyncIterable<ToolEvent>>;
}
