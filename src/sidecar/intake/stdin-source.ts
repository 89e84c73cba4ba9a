import type { Readable } from 'node:stream';
import type { EventPipeline } from '../pipeline/index.js';

/** Options for {@link StdinSource}. */
export interface StdinSourceOptions {
  input: Readable;
  pipeline: EventPipeline;
  /** Whether the export queue is over its budget: reading pauses until {@link StdinSource.resume}. */
  isFull: () => boolean;
  /** Called once at the end of input, after its last line was replayed. */
  onEnd: () => void;
  log: (line: string) => void;
}

/**
 * `--stdin`: replays standard input line by line, pausing the stream while the export queue is
 * over its budget (so `tooltrace sidecar --stdin < huge.jsonl` holds a bounded number of spans,
 * not the whole file) and resuming when exports drained it.
 */
export class StdinSource {
  readonly #options: StdinSourceOptions;
  #paused = false;
  #stopped = false;
  readonly #onData: (chunk: Buffer | string) => void;
  readonly #onEnd: () => void;
  readonly #onError: (error: Error) => void;

  constructor(options: StdinSourceOptions) {
    this.#options = options;
    const source = options.pipeline.source('stdin');
    const input = options.input;
    this.#onData = (chunk) => {
      source.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (!this.#paused && options.isFull()) {
        this.#paused = true;
        input.pause();
      }
    };
    this.#onEnd = () => {
      source.end();
      this.#detach();
      options.onEnd();
    };
    this.#onError = (error) => options.log(`tooltrace sidecar: stdin: ${String(error)}`);
    input.on('data', this.#onData);
    input.once('end', this.#onEnd);
    input.on('error', this.#onError);
  }

  /** Reads on if reading was paused and the queue is back under budget. */
  resume(): void {
    if (!this.#paused || this.#stopped || this.#options.isFull()) return;
    this.#paused = false;
    this.#options.input.resume();
  }

  /** Stops reading (shutdown); what was not read stays unread. */
  stop(): void {
    if (this.#stopped) return;
    this.#detach();
    this.#options.input.pause();
  }

  #detach(): void {
    this.#stopped = true;
    const input = this.#options.input;
    input.off('data', this.#onData);
    input.off('end', this.#onEnd);
    // The error listener stays: an error after the end must not become an uncaught one.
  }
}
