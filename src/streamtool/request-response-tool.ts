import type { ChannelTool } from './channel-tool.js';
import type { ToolEvent } from './tool-event.js';

/**
 * A plain tool: one call in, one output out, nothing in between. `execute` may return the output
 * or a promise of it, and should stop when `signal` aborts. A string output becomes the
 * `tool.result` output as is, anything else its JSON.
 */
export interface RequestResponseTool {
  /** The tool name as it appears in the catalog. */
  readonly name: string;
  execute(input: Record<string, unknown>, signal: AbortSignal): unknown;
}

/**
 * Adapts a {@link RequestResponseTool} to the streaming contract: a stream of exactly one
 * `complete` event carrying what `execute` returned, or an iterator that throws what it threw.
 * Through `bridge` it therefore emits just `tool.result`, with the same cancellation, veto and
 * causation rules as a streaming tool.
 */
export function toChannelTool(tool: RequestResponseTool): ChannelTool {
  if (tool === null || typeof tool !== 'object' || typeof tool.execute !== 'function') {
    throw new TypeError('tool must be an object with an execute(input, signal) method');
  }
  return {
    name: tool.name,
    async *stream(signal: AbortSignal, input: Record<string, unknown>): AsyncGenerator<ToolEvent> {
      const output: unknown = await tool.execute(input, signal);
      yield { kind: 'complete', payload: output };
    },
  };
}
