import { TooltraceError } from './tooltrace-error.js';

/**
 * A setting a user gives outside the code (a command-line flag, an environment variable, a file
 * the command reads, `runSidecar`'s options, which are the command's flags, or an optional
 * package a chosen option needs) has a value tooltrace cannot use.
 * `setting` names it, so the message can point the user at what to change.
 */
export class ConfigurationError extends TooltraceError {
  /** The flag, option or environment variable that was wrong. */
  readonly setting: string;

  constructor(message: string, options: { setting: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.setting = options.setting;
  }
}
