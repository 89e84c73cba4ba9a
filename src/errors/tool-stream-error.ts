import { TooltraceError } from './tooltrace-error.js';

/**
 * A streaming tool failed without giving an `Error`: an `error` event with no `error` field, or
 * one that holds something else (a string, a plain object). The original value, if any, is the
 * `cause`.
 */
export class ToolStreamError extends TooltraceError {}
