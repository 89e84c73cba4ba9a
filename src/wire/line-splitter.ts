import { Buffer } from 'node:buffer';
import { DEFAULT_MAX_LINE_BYTES } from './wire-limits.js';

const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;
/** A carry buffer grown past this is released once empty, so an idle splitter stays small. */
const RETAINED_CARRY_BYTES = 64 * 1024;
const INITIAL_CARRY_BYTES = 4 * 1024;

/** Options for {@link LineSplitter}. */
export interface LineSplitterOptions {
  /**
   * Called for every non-empty line, in order, without its LF or CRLF terminator. `endOffset` is
   * the stream position just past the line's LF (or the end of input for a final line without
   * one): a tailer that has handled this line can checkpoint there and resume with
   * `startOffset: endOffset`. A line that lies within one pushed chunk is a view of that chunk,
   * not a copy: keep chunks unmodified while their lines are in use.
   */
  onLine: (line: Uint8Array, endOffset: number) => void;
  /**
   * Called for every line longer than `maxLineBytes`, after it was skipped. `byteLength` counts
   * the bytes before its LF. The stream goes on with the next line.
   */
  onOversizedLine?: (byteLength: number, endOffset: number) => void;
  /**
   * Longest line accepted, in bytes, without its LF or CRLF terminator. A longer line is never
   * held in memory: once it is known to be too long its bytes are discarded up to the next LF.
   * @default DEFAULT_MAX_LINE_BYTES (1 MiB)
   */
  maxLineBytes?: number;
  /**
   * Stream position of the first byte pushed, for example a checkpoint when resuming a file.
   * @default 0
   */
  startOffset?: number;
}

/**
 * Splits a byte stream into lines (NDJSON framing). Survives lines split across chunks at any
 * byte, CRLF terminators, a final line without a newline (delivered by {@link LineSplitter.end})
 * and lines over the size limit (reported to `onOversizedLine` and counted; the stream goes on).
 * Empty lines are skipped.
 *
 * Built for throughput: each chunk is scanned with `Buffer.indexOf(0x0a)` and every line that
 * lies within one chunk is handed out as a view, without copying. Only the unfinished line at the
 * end of a chunk is copied into a carry buffer, which never holds more than `maxLineBytes + 1`
 * bytes ({@link LineSplitter.bufferedBytes}).
 *
 * Callbacks run synchronously inside {@link LineSplitter.push}; one that throws stops the rest of
 * that chunk, so they should not throw.
 */
export class LineSplitter {
  readonly #onLine: LineSplitterOptions['onLine'];
  readonly #onOversizedLine: LineSplitterOptions['onOversizedLine'];
  readonly #maxLineBytes: number;
  /** Stream position of the next byte pushed. */
  #position: number;
  /** The unfinished line from earlier chunks: `#carry[0, #carryLength)`. */
  #carry: Buffer | undefined;
  #carryLength = 0;
  /** Set while skipping an oversized line up to its LF: how many bytes were skipped so far. */
  #discarded = -1;
  #lines = 0;
  #oversizedLines = 0;

  constructor(options: LineSplitterOptions) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('options must be an object');
    }
    if (typeof options.onLine !== 'function') {
      throw new TypeError('options.onLine must be a function');
    }
    if (options.onOversizedLine !== undefined && typeof options.onOversizedLine !== 'function') {
      throw new TypeError('options.onOversizedLine must be a function');
    }
    const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1) {
      throw new TypeError(
        `options.maxLineBytes must be a positive integer, got ${String(maxLineBytes)}`,
      );
    }
    const startOffset = options.startOffset ?? 0;
    if (!Number.isSafeInteger(startOffset) || startOffset < 0) {
      throw new TypeError(
        `options.startOffset must be a non-negative integer, got ${String(startOffset)}`,
      );
    }
    this.#onLine = options.onLine;
    this.#onOversizedLine = options.onOversizedLine;
    this.#maxLineBytes = maxLineBytes;
    this.#position = startOffset;
  }

  /** Stream position just past the last byte pushed. */
  get position(): number {
    return this.#position;
  }

  /** Bytes of an unfinished line held until its LF arrives; at most `maxLineBytes + 1`. */
  get bufferedBytes(): number {
    return this.#carryLength;
  }

  /** Lines delivered to `onLine` so far. */
  get lines(): number {
    return this.#lines;
  }

  /** Lines skipped for being longer than `maxLineBytes` so far. */
  get oversizedLines(): number {
    return this.#oversizedLines;
  }

  /** Splits the next chunk of the stream, calling `onLine` for every line it completes. */
  push(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const length = bytes.length;
    if (length === 0) return;
    const chunkStart = this.#position;
    this.#position += length;
    let start = 0;

    if (this.#discarded >= 0) {
      const lineFeed = bytes.indexOf(LINE_FEED);
      if (lineFeed === -1) {
        this.#discarded += length;
        return;
      }
      const byteLength = this.#discarded + lineFeed;
      this.#discarded = -1;
      this.#oversized(byteLength, chunkStart + lineFeed + 1);
      start = lineFeed + 1;
    } else if (this.#carryLength > 0) {
      const lineFeed = bytes.indexOf(LINE_FEED);
      if (lineFeed === -1) {
        this.#keepTail(bytes, 0);
        return;
      }
      this.#finishCarriedLine(bytes, lineFeed, chunkStart + lineFeed + 1);
      start = lineFeed + 1;
    }

    const maxLineBytes = this.#maxLineBytes;
    for (;;) {
      const lineFeed = bytes.indexOf(LINE_FEED, start);
      if (lineFeed === -1) break;
      let end = lineFeed;
      if (end > start && bytes[end - 1] === CARRIAGE_RETURN) end -= 1;
      if (end - start > maxLineBytes) {
        this.#oversized(lineFeed - start, chunkStart + lineFeed + 1);
      } else if (end > start) {
        this.#lines += 1;
        this.#onLine(bytes.subarray(start, end), chunkStart + lineFeed + 1);
      }
      start = lineFeed + 1;
    }
    if (start < length) this.#keepTail(bytes, start);
  }

  /**
   * Ends the stream: delivers a final line that had no newline (its `endOffset` is the end of
   * input) or reports it as oversized, then starts afresh at the current position. A tailer
   * following a growing file should not call it, since the last line may still be being written.
   */
  end(): void {
    if (this.#discarded >= 0) {
      const byteLength = this.#discarded;
      this.#discarded = -1;
      this.#oversized(byteLength, this.#position);
      return;
    }
    const carryLength = this.#carryLength;
    if (carryLength === 0 || this.#carry === undefined) return;
    const carry = this.#carry;
    let end = carryLength;
    if (carry[end - 1] === CARRIAGE_RETURN) end -= 1;
    this.#clearCarry();
    if (end > this.#maxLineBytes) {
      this.#oversized(carryLength, this.#position);
    } else if (end > 0) {
      this.#lines += 1;
      this.#onLine(Buffer.from(carry.subarray(0, end)), this.#position);
    }
  }

  /** Completes the carried line with `bytes[0, lineFeed)`. */
  #finishCarriedLine(bytes: Buffer, lineFeed: number, endOffset: number): void {
    const carry = this.#carry as Buffer;
    const carryLength = this.#carryLength;
    let total = carryLength + lineFeed;
    if (
      lineFeed > 0
        ? bytes[lineFeed - 1] === CARRIAGE_RETURN
        : carry[carryLength - 1] === CARRIAGE_RETURN
    ) {
      total -= 1;
    }
    if (total > this.#maxLineBytes) {
      this.#clearCarry();
      this.#oversized(carryLength + lineFeed, endOffset);
      return;
    }
    // A fresh buffer, so the line stays valid after the carry buffer is reused.
    const line = Buffer.allocUnsafe(total);
    if (total <= carryLength) {
      carry.copy(line, 0, 0, total);
    } else {
      carry.copy(line, 0, 0, carryLength);
      bytes.copy(line, carryLength, 0, total - carryLength);
    }
    this.#clearCarry();
    if (total > 0) {
      this.#lines += 1;
      this.#onLine(line, endOffset);
    }
  }

  /** Holds `bytes[start, end)` until its LF arrives, or starts discarding once it is too long. */
  #keepTail(bytes: Buffer, start: number): void {
    const tailLength = bytes.length - start;
    const needed = this.#carryLength + tailLength;
    // One byte of slack: the tail may end with the CR of a CRLF.
    if (needed > this.#maxLineBytes + 1) {
      this.#discarded = needed;
      this.#clearCarry();
      return;
    }
    let carry = this.#carry;
    if (carry === undefined || carry.length < needed) {
      let capacity = Math.max(carry?.length ?? 0, INITIAL_CARRY_BYTES);
      while (capacity < needed) capacity *= 2;
      const grown = Buffer.allocUnsafe(Math.min(capacity, this.#maxLineBytes + 1));
      if (carry !== undefined) carry.copy(grown, 0, 0, this.#carryLength);
      carry = grown;
      this.#carry = carry;
    }
    bytes.copy(carry, this.#carryLength, start);
    this.#carryLength = needed;
  }

  #clearCarry(): void {
    this.#carryLength = 0;
    if (this.#carry !== undefined && this.#carry.length > RETAINED_CARRY_BYTES) {
      this.#carry = undefined;
    }
  }

  #oversized(byteLength: number, endOffset: number): void {
    this.#oversizedLines += 1;
    this.#onOversizedLine?.(byteLength, endOffset);
  }
}
