import { TooltraceError } from './tooltrace-error.js';

/**
 * A plugin was used in a state that does not allow it: attached to a bus twice, or attached
 * after `shutdown()`.
 */
export class PluginStateError extends TooltraceError {}
