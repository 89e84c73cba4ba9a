import { TooltraceError } from './tooltrace-error.js';

/**
 * A streaming tool gave an event a sequence that does not grow: equal to or lower than the
 * previous event's. bridge reports this as `core.error` and still delivers the event, since the
 * payload itself is sound and a consumer may prefer a late event to a missing one.
 */
export class SequenceOrderError extends TooltraceError {
  /** The tool that yielded the event. */
  readonly toolName: string;
  /** The tool call the event belongs to. */
  readonly callId: string;
  /** The sequence the event carried. */
  readonly sequence: number;
  /** The sequence of the event before it. */
  readonly previous: number;

  constructor(toolName: string, callId: string, sequence: number, previous: number) {
    super(
      `tool "${toolName}" (call ${callId}) yielded sequence ${sequence} after ${previous}: ` +
        'sequence went backwards, the event is delivered anyway',
    );
    this.toolName = toolName;
    this.callId = callId;
    this.sequence = sequence;
    this.previous = previous;
  }
}
