import { open, rename, stat, type FileHandle } from 'node:fs/promises';
import { ConfigurationError } from '../../errors/index.js';
import { SHUT_DOWN, type BatchTransport, type ExportOutcome } from './export-outcome.js';
import { OtlpJsonTraceEncoder, type SpanBatch } from '../../otlp/index.js';
import { tooltraceNumberTypes } from './tooltrace-number-types.js';

/** Options for {@link OtlpFileExporter.open}. */
export interface OtlpFileExporterOptions {
  /** The file to write. */
  path: string;
  /**
   * Size at which the file is rotated: renamed to `PATH.1` (the one before to `PATH.2`, and so
   * on) and started afresh; `0` never rotates, nor is a device or pipe (`/dev/null`) ever rotated.
   * One request is never split: a file ends at a line boundary, and a request larger than this
   * has a file of its own.
   * @default 104857600 (100 MiB)
   */
  maxBytes?: number;
  /**
   * Rotated files kept (`PATH.1` the newest); at the limit the oldest is deleted, so the disk
   * holds at most `(maxBackups + 1) × maxBytes` (plus one request). `0` keeps none: the file is
   * emptied and started afresh.
   * @default 3
   */
  maxBackups?: number;
  /**
   * Append to what the file holds (a run resuming from a checkpoint continues the file) rather
   * than start it afresh.
   * @default false
   */
  append?: boolean;
  /** Where a rotation is said. @default nowhere */
  log?: (line: string) => void;
}

const NEWLINE = Buffer.from('\n');

/**
 * Writes what is exported as OTLP JSON lines, one `ExportTraceServiceRequest` a line: the format
 * the Collector's file exporter writes and `tooltrace view` (and the Collector's `otlpjsonfile`
 * receiver) reads. A {@link BatchTransport} over the sidecar's own JSON encoder, driven by the
 * same `ReliableSpanProcessor` as OTLP: spans are encoded as they end; a batch is one write,
 * after the one before it; a write that fails (a full disk) is cut back to the last whole line
 * and retried, never left half written; `shutdown()` waits for the writes queued, then syncs and
 * closes the file, so a sidecar stopped by SIGTERM leaves only whole lines.
 */
export class OtlpFileExporter implements BatchTransport<Uint8Array> {
  readonly #path: string;
  readonly #maxBytes: number;
  readonly #maxBackups: number;
  readonly #log: (line: string) => void;
  readonly #encoder = new OtlpJsonTraceEncoder(tooltraceNumberTypes());
  #handle: FileHandle;
  #size: number;
  /** The write under way and those queued behind it: one at a time, in order. */
  #chain: Promise<unknown> = Promise.resolve();
  #shutdown: Promise<void> | undefined;

  private constructor(
    options: OtlpFileExporterOptions,
    handle: FileHandle,
    size: number,
    regular: boolean,
  ) {
    this.#path = options.path;
    // A device or pipe (`--out /dev/null`, `/dev/stdout`) is never rotated: that would rename it.
    this.#maxBytes = regular ? (options.maxBytes ?? 100 * 1024 * 1024) : 0;
    this.#maxBackups = options.maxBackups ?? 3;
    this.#log = options.log ?? (() => {});
    this.#handle = handle;
    this.#size = size;
  }

  /**
   * Opens (creates, or empties unless `append`) the file; throws a {@link ConfigurationError}
   * naming `--out` when it cannot be written, before anything else starts.
   */
  static async open(options: OtlpFileExporterOptions): Promise<OtlpFileExporter> {
    let handle: FileHandle;
    let regular: boolean;
    try {
      // Appending, always: a write cut back after a failure leaves the next one at the end.
      handle = await open(options.path, 'a');
      // A device or pipe cannot be emptied (ftruncate fails with EINVAL), nor needs to be.
      regular = (await handle.stat()).isFile();
      if (regular && options.append !== true) await handle.truncate(0);
    } catch (error) {
      throw new ConfigurationError(
        `--out ${options.path}: cannot write the file: ${(error as Error).message}`,
        { setting: '--out', cause: error },
      );
    }
    const size = regular && options.append === true ? (await handle.stat()).size : 0;
    return new OtlpFileExporter(options, handle, size, regular);
  }

  /** Where spans go, for the start-up line. */
  get description(): string {
    return `${this.#path} (OTLP JSON lines)`;
  }

  openBatch(): SpanBatch<Uint8Array> {
    return this.#encoder.openBatch();
  }

  send(body: Uint8Array): Promise<ExportOutcome> {
    if (this.#shutdown !== undefined) return Promise.resolve(SHUT_DOWN);
    const writing = this.#chain.then(() => this.#write(body));
    this.#chain = writing;
    return writing;
  }

  releaseBatch(body: Uint8Array): void {
    this.#encoder.release(body);
  }

  /** Refuses new batches, waits for the writes queued, syncs and closes the file. */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      await this.#chain;
      await this.#handle.sync().catch(() => undefined);
      await this.#handle.close().catch(() => undefined);
    })();
    return this.#shutdown;
  }

  async #write(body: Uint8Array): Promise<ExportOutcome> {
    const length = body.length + 1;
    try {
      if (this.#maxBytes > 0 && this.#size > 0 && this.#size + length > this.#maxBytes) {
        await this.#rotate();
      }
    } catch (error) {
      return this.#failed('rotate', error);
    }
    let written = 0;
    try {
      ({ bytesWritten: written } = await this.#handle.writev([body, NEWLINE]));
      if (written !== length) throw new Error(`wrote ${written} of ${length} bytes`);
    } catch (error) {
      // Back to the last whole line: a retry must not follow half a request.
      await this.#handle.truncate(this.#size).catch(() => undefined);
      return this.#failed('write', error);
    }
    this.#size += length;
    return { kind: 'success', rejectedSpans: 0, rejectionMessage: '' };
  }

  #failed(what: string, error: unknown): ExportOutcome {
    return {
      kind: 'retryable',
      status: 'file',
      reason: `cannot ${what} ${this.#path}: ${(error as Error).message}`,
      retryAfterMs: undefined,
    };
  }

  /** `PATH.(n-1)` to `PATH.n` … `PATH` to `PATH.1`, the oldest replaced; a new, empty `PATH`. */
  async #rotate(): Promise<void> {
    await this.#handle.sync().catch(() => undefined);
    // Closed already when a rotation failed half way: this one starts it again.
    await this.#handle.close().catch(() => undefined);
    const size = this.#size;
    let deleted = false;
    if (this.#maxBackups > 0) {
      // A file not there (a rotation that failed half way, retried) is no failure.
      const moved = (error: NodeJS.ErrnoException): void => {
        if (error.code !== 'ENOENT') throw error;
      };
      // The oldest is replaced by the rename below: deleted, if there was one.
      deleted = await stat(`${this.#path}.${this.#maxBackups}`).then(
        () => true,
        () => false,
      );
      for (let index = this.#maxBackups - 1; index >= 1; index -= 1) {
        await rename(`${this.#path}.${index}`, `${this.#path}.${index + 1}`).catch(moved);
      }
      await rename(this.#path, `${this.#path}.1`).catch(moved);
    }
    this.#handle = await open(this.#path, 'a');
    if (this.#maxBackups === 0) await this.#handle.truncate(0);
    this.#size = 0;
    this.#log(
      this.#maxBackups === 0
        ? `tooltrace sidecar: ${this.#path} reached ${size} bytes (--out-max-bytes ${this.#maxBytes}); emptied and started afresh (--out-backups 0)`
        : `tooltrace sidecar: ${this.#path} reached ${size} bytes (--out-max-bytes ${this.#maxBytes}); rotated to ${this.#path}.1, keeping ${this.#maxBackups} (--out-backups)${deleted ? `; the oldest, ${this.#path}.${this.#maxBackups}, deleted` : ''}`,
    );
  }
}
