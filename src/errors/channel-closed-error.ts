import { TooltraceError } from './tooltrace-error.js';

/** Why a channel accepts no more events. */
export type ChannelEnd = 'complete' | 'error' | 'closed' | 'consumer-stopped';

/**
 * A producer pushed an event into a `ToolChannel` that accepts no more: it already carried its
 * terminal event (`complete` or `error`), it was closed, or its consumer stopped reading.
 * `endedBy` says which, so a producer can tell a bug of its own from a cancelled call.
 */
export class ChannelClosedError extends TooltraceError {
  /** What ended the channel. */
  readonly endedBy: ChannelEnd;
  /** Kind of the event that was refused. */
  readonly eventKind: string;

  constructor(eventKind: string, endedBy: ChannelEnd) {
    const article = /^[aeiou]/.test(eventKind) ? 'an' : 'a';
    super(`cannot push ${article} ${eventKind} event: ${describeEnd(endedBy)}`);
    this.eventKind = eventKind;
    this.endedBy = endedBy;
  }
}

function describeEnd(endedBy: ChannelEnd): string {
  switch (endedBy) {
    case 'complete':
      return 'the channel already ended with a complete event';
    case 'error':
      return 'the channel already ended with an error event';
    case 'closed':
      return 'the channel was closed';
    case 'consumer-stopped':
      return 'the consumer stopped reading the channel';
  }
}
