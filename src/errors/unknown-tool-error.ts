import { TooltraceError } from './tooltrace-error.js';

/**
 * A `tool.invoke` named a tool that nothing on the bus answers (a model asking for a tool that
 * does not exist, a typo): the call's failed `tool.result` says so, with `error.type`
 * `unknown_tool`, and names the tools that are answered.
 */
export class UnknownToolError extends TooltraceError {
  /** The name the call asked for. */
  readonly toolName: string;
  /** The tool names answered on the bus when the call came, sorted. */
  readonly knownTools: readonly string[];

  constructor(toolName: string, knownTools: readonly string[]) {
    const known = knownTools.length === 0 ? 'none' : knownTools.join(', ');
    super(`no tool named "${toolName}" is answered on this bus; the tools are: ${known}`);
    this.toolName = toolName;
    this.knownTools = knownTools;
  }
}
