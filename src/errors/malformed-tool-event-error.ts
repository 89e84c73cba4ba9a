import { describeValue } from './describe-value.js';
import { TooltraceError } from './tooltrace-error.js';

/**
 * A streaming tool yielded an event `bridge` cannot project: an unknown `kind`, a `progress`
 * outside 0..1 that is not -1, or a `sequence` that is not a positive integer. `field` names the
 * offending field and `value` holds what the tool gave; bridge reports this as `core.error` and
 * skips the event, or only the one attribute when `field` is `attributes.<key>` (or `errorType`).
 */
export class MalformedToolEventError extends TooltraceError {
  /** The tool that yielded the event. */
  readonly toolName: string;
  /** The tool call the event belongs to. */
  readonly callId: string;
  /** The field that was wrong (`event` when the event is not an object at all). */
  readonly field: string;
  /** The value the tool gave for that field. */
  readonly value: unknown;

  constructor(
    toolName: string,
    callId: string,
    field: string,
    value: unknown,
    expected: string,
    skipped = 'skipped',
  ) {
    super(
      `tool "${toolName}" (call ${callId}) yielded a malformed event, ${skipped}: ` +
        `${field} must be ${expected}, got ${describeValue(value)}`,
    );
    this.toolName = toolName;
    this.callId = callId;
    this.field = field;
    this.value = value;
  }
}
