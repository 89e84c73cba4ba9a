import { diag } from '@opentelemetry/api';
import { ATTR_STREAM_EVENTS_DROPPED } from '../events/index.js';
import type { ToolChannel } from '../streamtool/index.js';

/**
 * Characters of a peer's progress or status message kept: it is a status line, and each one
 * waiting for the bus holds what it carries.
 */
export const MAX_MESSAGE_CHARS = 4096;

/** `message` cut to {@link MAX_MESSAGE_CHARS} (a cut message ends with `…`). */
export function boundedMessage<T extends string | undefined>(message: T): T {
  if (typeof message !== 'string' || message.length <= MAX_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` as T;
}

/**
 * Relays one call's progress notifications into its channel. Notifications cannot be slowed
 * down, so pushes that wait for the reader are bounded: past `capacity - 2` of them the newest
 * notification is kept aside, replacing (and counting) any kept before, and pushed as soon as a
 * waiting push goes through — a burst ends on the server's last value, not on the first values
 * that fitted. Two places stay free for the kept value and the call's terminal event. What was
 * let go is counted on the span as `tooltrace.stream.events.dropped` (and warned of once per call).
 */
export class ProgressRelay {
  readonly #channel: ToolChannel;
  readonly #toolName: string;
  readonly #limit: number;
  #waiting = 0;
  #kept: { fraction: number; message: string | undefined } | undefined;
  #dropped = 0;

  constructor(channel: ToolChannel, toolName: string) {
    this.#channel = channel;
    this.#toolName = toolName;
    this.#limit = Math.max(1, channel.capacity - 2);
  }

  /** Progress events let go so far. */
  get dropped(): number {
    return this.#dropped;
  }

  offer(fraction: number, message: string | undefined): void {
    if (this.#channel.closed) return;
    message = boundedMessage(message);
    if (this.#waiting >= this.#limit) {
      if (this.#kept !== undefined) this.#drop();
      this.#kept = { fraction, message };
      return;
    }
    this.#push(fraction, message);
  }

  /** Pushes the value kept aside, if any: the call is about to end, and it is the newest. */
  flush(): void {
    const kept = this.#kept;
    this.#kept = undefined;
    if (kept !== undefined && !this.#channel.closed) this.#push(kept.fraction, kept.message);
  }

  #push(fraction: number, message: string | undefined): void {
    let pushed: Promise<void>;
    try {
      pushed = this.#channel.progress(fraction, message);
    } catch {
      // Full or closed after all: the value is let go, and counted.
      this.#drop();
      return;
    }
    this.#waiting += 1;
    pushed.then(this.#settled, this.#settled);
  }

  readonly #settled = (): void => {
    this.#waiting -= 1;
    if (this.#kept !== undefined && this.#waiting < this.#limit) this.flush();
  };

  #drop(): void {
    if (this.#dropped++ === 0) {
      diag.warn(
        `tooltrace: MCP tool "${this.#toolName}" sent progress faster than it was read; ` +
          'the newest value is kept, the others counted as tooltrace.stream.events.dropped',
      );
    }
    this.#channel.annotate({ [ATTR_STREAM_EVENTS_DROPPED]: this.#dropped });
  }
}
