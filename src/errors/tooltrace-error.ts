/**
 * The base of every error tooltrace throws or reports, so callers can tell ours from the rest
 * with one `instanceof` check. `name` is the concrete class's name, and `cause` keeps the error
 * this one wraps, when there is one.
 */
export class TooltraceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
