import { ChannelClosedError, type ChannelEnd } from '../errors/channel-closed-error.js';
import { ChannelFullError } from '../errors/channel-full-error.js';
import { ToolStreamError } from '../errors/tool-stream-error.js';
import type { ToolAttributes } from '../events/index.js';
import { isProgressFraction, type ToolEvent, type ToolEventKind } from './tool-event.js';

/** Options for {@link ToolChannel}. */
export interface ToolChannelOptions {
  /**
   * How many events the channel holds before pushes wait for the consumer. As many pushes again
   * may wait; one more throws {@link ChannelFullError}.
   * @default 64
   */
  capacity?: number;
}

/** What a terminal event may add about the call: its span attributes and error type. */
export type ToolEventDetails = Pick<ToolEvent, 'attributes' | 'errorType'>;

const DEFAULT_CAPACITY = 64;
const RESOLVED: Promise<void> = Promise.resolve();
const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

interface WaitingPush {
  readonly event: ToolEvent;
  readonly resolve: () => void;
}

/**
 * A push-style stream of tool events, for tools driven by callbacks (a child process, a socket)
 * rather than written as async generators: the tool returns the channel from `stream()` and
 * pushes into it with {@link ToolChannel.progress}, {@link ToolChannel.partial},
 * {@link ToolChannel.complete} or {@link ToolChannel.fail}. The channel numbers events 1, 2, 3….
 * Its buffer is bounded: a push returns a promise that resolves once the event is in the buffer,
 * so a producer that awaits it goes no faster than its consumer. After the terminal event,
 * after {@link ToolChannel.close}, or once the consumer stopped reading, a push throws
 * {@link ChannelClosedError}. Iteration ends after the terminal event; `close()` ends it without
 * one. One consumer reads it.
 */
export class ToolChannel implements AsyncIterable<ToolEvent> {
  readonly #capacity: number;
  readonly #buffer: ToolEvent[] = [];
  readonly #waitingPushes: WaitingPush[] = [];
  readonly #waitingReads: ((result: IteratorResult<ToolEvent>) => void)[] = [];
  #sequence = 0;
  /** Span attributes given with {@link ToolChannel.annotate}, for whatever ending. */
  #annotations: ToolAttributes | undefined;
  /** Set once the channel takes no more pushes; buffered events are still read. */
  #endedBy: ChannelEnd | undefined;

  constructor(options: ToolChannelOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('options must be an object');
    }
    const capacity = options.capacity ?? DEFAULT_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `options.capacity must be a positive integer, got ${String(options.capacity)}`,
      );
    }
    this.#capacity = capacity;
  }

  /** How many events the buffer holds before pushes wait. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Whether the channel refuses further pushes (terminal event sent, closed, or abandoned). */
  get closed(): boolean {
    return this.#endedBy !== undefined;
  }

  /**
   * Pushes a `progress` event: `progress` is the fraction done (0..1), or -1 when unknown.
   * Throws a `RangeError` for any other value. `details.attributes` go on the event's span event
   * and on the call's span (see {@link ToolEvent.attributes}).
   */
  progress(
    progress: number,
    payload?: unknown,
    details: Pick<ToolEvent, 'attributes'> = {},
  ): Promise<void> {
    if (!isProgressFraction(progress)) {
      throw new RangeError(
        `progress must be a number from 0 to 1, or -1 when unknown, got ${String(progress)}`,
      );
    }
    const event: ToolEvent = { kind: 'progress', progress, payload };
    if (details.attributes !== undefined) event.attributes = details.attributes;
    return this.#push('progress', event);
  }

  /**
   * Adds span attributes to the call now, without an event: `bridge` puts them on the call's
   * `tool.result` however it ends, cancelled included, even when the channel's events were not
   * read yet (what a tool learns as it starts, such as the id of the request it sent). A later
   * value for a key wins; attributes on events win over these.
   */
  annotate(attributes: ToolAttributes): void {
    if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) {
      throw new TypeError('attributes must be an object of span attribute values');
    }
    this.#annotations = { ...this.#annotations, ...attributes };
  }

  /** The attributes given with {@link ToolChannel.annotate} so far. */
  get annotations(): Readonly<ToolAttributes> | undefined {
    return this.#annotations;
  }

  /**
   * Pushes a `partial` event carrying a piece of output. `details.attributes` go on the event's
   * span event and on the call's span (see {@link ToolEvent.attributes}).
   */
  partial(payload: unknown, details: Pick<ToolEvent, 'attributes'> = {}): Promise<void> {
    const event: ToolEvent = { kind: 'partial', payload };
    if (details.attributes !== undefined) event.attributes = details.attributes;
    return this.#push('partial', event);
  }

  /**
   * Pushes the terminal `complete` event with the final output; the channel then ends.
   * `details.attributes` go on the call's span (see {@link ToolEvent.attributes}).
   */
  complete(payload?: unknown, details: ToolEventDetails = {}): Promise<void> {
    const pushed = this.#push('complete', { ...details, kind: 'complete', payload });
    this.#endedBy = 'complete';
    return pushed;
  }

  /**
   * Pushes the terminal `error` event; the channel then ends. Anything other than an `Error` is
   * wrapped in a {@link ToolStreamError} whose cause it is. `details.errorType` names the kind
   * of failure (the span's `error.type`), `details.attributes` go on the call's span.
   */
  fail(error: unknown, details: ToolEventDetails = {}): Promise<void> {
    const failure =
      error instanceof Error
        ? error
        : new ToolStreamError(typeof error === 'string' ? error : 'tool failed', { cause: error });
    const pushed = this.#push('error', { ...details, kind: 'error', error: failure });
    this.#endedBy = 'error';
    return pushed;
  }

  /**
   * Ends the channel without a terminal event: what is buffered is still read, then iteration
   * ends (bridge then completes the call with the last partial's payload). Idempotent; does
   * nothing after a terminal event.
   */
  close(): void {
    if (this.#endedBy !== undefined) return;
    this.#endedBy = 'closed';
    this.#settleReadsIfDrained();
  }

  /** The channel's events, in push order; meant for one consumer. */
  [Symbol.asyncIterator](): AsyncIterator<ToolEvent> {
    return {
      next: () => this.#next(),
      return: () => this.#stopReading(),
    };
  }

  #push(kind: ToolEventKind, event: ToolEvent): Promise<void> {
    if (this.#endedBy !== undefined) throw new ChannelClosedError(kind, this.#endedBy);
    const read = this.#waitingReads.shift();
    if (read !== undefined) {
      event.sequence = ++this.#sequence;
      read({ value: event, done: false });
      return RESOLVED;
    }
    if (this.#buffer.length < this.#capacity) {
      event.sequence = ++this.#sequence;
      this.#buffer.push(event);
      return RESOLVED;
    }
    if (this.#waitingPushes.length >= this.#capacity) throw new ChannelFullError(this.#capacity);
    event.sequence = ++this.#sequence;
    return new Promise<void>((resolve) => this.#waitingPushes.push({ event, resolve }));
  }

  #next(): Promise<IteratorResult<ToolEvent>> {
    const event = this.#buffer.shift();
    if (event !== undefined) {
      // Room was made: the oldest waiting push takes it.
      const waiting = this.#waitingPushes.shift();
      if (waiting !== undefined) {
        this.#buffer.push(waiting.event);
        waiting.resolve();
      }
      return Promise.resolve({ value: event, done: false });
    }
    if (this.#endedBy !== undefined) return Promise.resolve(DONE);
    return new Promise((resolve) => this.#waitingReads.push(resolve));
  }

  /** The consumer stopped reading: drop what is buffered and refuse further pushes. */
  #stopReading(): Promise<IteratorResult<ToolEvent>> {
    this.#endedBy ??= 'consumer-stopped';
    this.#buffer.length = 0;
    // Waiting producers are released rather than rejected: nobody reads their events any more,
    // and a rejection a producer did not await would crash the process.
    for (const waiting of this.#waitingPushes.splice(0)) waiting.resolve();
    this.#settleReadsIfDrained();
    return Promise.resolve(DONE);
  }

  #settleReadsIfDrained(): void {
    if (this.#buffer.length > 0) return;
    for (const read of this.#waitingReads.splice(0)) read(DONE);
  }
}
