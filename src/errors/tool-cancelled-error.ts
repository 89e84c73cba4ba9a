import { TooltraceError } from './tooltrace-error.js';

/**
 * The reason a tool call is aborted with when tooltrace itself cancels it, for example when a
 * `StreamingToolPlugin` shuts down while the call is still running. Its message becomes the
 * `error` of the cancelled `tool.result`.
 */
export class ToolCancelledError extends TooltraceError {}
