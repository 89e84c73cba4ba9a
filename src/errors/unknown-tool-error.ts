import { TooltraceError } from './tooltrace-error.js';

/** Tool names the message lists at most: it goes into the span, whatever the bus answers. */
const MAX_LISTED = 20;
/** Characters of a name the message keeps. */
const MAX_NAME_CHARS = 64;

function cut(name: string): string {
  return name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS)}…` : name;
}

function listed(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, MAX_LISTED).map(cut).join(', ');
  const more = names.length - MAX_LISTED;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/**
 * A `tool.invoke` named a tool that nothing on the bus answers (a model asking for a tool that
 * does not exist, a typo): the call's failed `tool.result` says so, with `error.type`
 * `unknown_tool`, and names the tools that are answered (the message lists the first 20, each cut
 * to 64 characters; {@link UnknownToolError.knownTools} has them all).
 */
export class UnknownToolError extends TooltraceError {
  /** The name the call asked for. */
  readonly toolName: string;
  /** The tool names answered on the bus when the call came, sorted. */
  readonly knownTools: readonly string[];

  constructor(toolName: string, knownTools: readonly string[]) {
    super(
      `no tool named "${cut(toolName)}" is answered on this bus; the tools are: ${listed(knownTools)}`,
    );
    this.toolName = toolName;
    this.knownTools = knownTools;
  }
}
