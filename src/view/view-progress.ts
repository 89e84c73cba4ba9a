import { counted } from '../errors/index.js';
import type { ReadProgress } from './read-journal-spans.js';

/** Options for {@link ViewProgress}. */
export interface ViewProgressOptions {
  /** Where the progress line goes: standard error, shown only when it is a terminal. */
  stream: NodeJS.WritableStream;
  /** The counters the reader keeps up to date. */
  progress: ReadProgress;
  /** Size of the file, to say how far along reading is. */
  totalBytes: number;
  /**
   * How long reading runs before a progress line is shown: short reads show nothing.
   * @default 1000
   */
  delayMs?: number;
}

/**
 * The progress line `tooltrace view` shows on a terminal while it reads a large file (bytes and
 * lines read, calls seen), redrawn in place and cleared before anything is drawn, so the drawing
 * starts on a clean line. On anything but a terminal (a pipe, a CI log) it writes nothing: a log
 * of carriage returns helps no one. Its timers are `unref()`ed and {@link stop} is idempotent.
 */
export class ViewProgress {
  readonly #options: ViewProgressOptions;
  #timer: NodeJS.Timeout | undefined;
  #shown = false;

  constructor(options: ViewProgressOptions) {
    this.#options = options;
    if ((options.stream as { isTTY?: boolean }).isTTY !== true) return;
    this.#timer = setTimeout(() => {
      this.#draw();
      this.#timer = setInterval(() => this.#draw(), 250);
      this.#timer.unref();
    }, options.delayMs ?? 1000);
    this.#timer.unref();
  }

  /** Stops redrawing and clears the line if one was shown. Safe to call twice. */
  stop(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#shown) this.#options.stream.write('\r\u001b[2K');
    this.#shown = false;
  }

  /** Clears the line for a message written in between; the next tick draws it again. */
  interrupt(): void {
    if (this.#shown) this.#options.stream.write('\r\u001b[2K');
    this.#shown = false;
  }

  #draw(): void {
    const { progress, totalBytes } = this.#options;
    const percent = totalBytes > 0 ? ` (${Math.floor((progress.bytes / totalBytes) * 100)}%)` : '';
    const localized = (value: number): string => value.toLocaleString('en-US');
    const line =
      `reading: ${formatMegabytes(progress.bytes)} of ${formatMegabytes(totalBytes)}${percent}, ` +
      `${counted(progress.lines, 'line', 'lines', localized)}, ` +
      `${counted(progress.calls, 'call', 'calls', localized)}`;
    this.#options.stream.write(`\r\u001b[2K${line}`);
    this.#shown = true;
  }
}

function formatMegabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
