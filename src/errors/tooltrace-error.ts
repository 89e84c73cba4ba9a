/**
 * The base of every error of tooltrace's own kinds (a closed channel, a cancelled tool, a
 * setting a user got wrong: see docs/errors.md), so callers can tell ours from the rest with one
 * `instanceof` check. A mistake in the calling code (an argument or option of the wrong type or
 * range) is JavaScript's own `TypeError` or `RangeError` instead, as in Node.js's APIs. `name` is the concrete class's name, and `cause` keeps the error
 * this one wraps, when there is one.
 */
export class TooltraceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
