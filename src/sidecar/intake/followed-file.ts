import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigurationError } from '../../errors/index.js';
import { CheckpointFile } from './checkpoint-file.js';
import { CheckpointTracker } from '../pipeline/index.js';
import type { EventPipeline, LineSource } from '../pipeline/index.js';
import { FileTailer, type TailOpenReason, type TailStart } from './file-tailer.js';

/** Options for {@link FollowedFile.open}. */
export interface FollowedFileOptions {
  path: string;
  pipeline: EventPipeline;
  /** Where to record (and resume from) how far the file was safely exported. */
  checkpoint?: string | undefined;
  /** Ignore the stored checkpoint (a corrupt one, say) and read the file from the start. */
  checkpointReset?: boolean | undefined;
  /** @default 1000 */
  checkpointIntervalMs?: number;
  /** While true (the export queue is full), reading waits. */
  isFull: () => boolean;
  /** Events the tracer holds for a missing invoke: while any, the checkpoint does not advance. */
  heldEvents: () => number;
  log: (line: string) => void;
}

/**
 * One `--file`: a {@link FileTailer} feeding a line source of the pipeline, and — with a
 * checkpoint — a {@link CheckpointTracker} per file generation (a rotated or truncated file starts
 * a new one at offset 0) whose safe offset is written to the checkpoint file every second and on
 * stop.
 */
export class FollowedFile {
  readonly #options: FollowedFileOptions;
  readonly #checkpointFile: CheckpointFile | undefined;
  readonly #tailer: FileTailer;
  #source: LineSource | undefined;
  /** The source of a file renamed away, still read for a while after rotation. */
  #rotatedSource: LineSource | undefined;
  #tracker: CheckpointTracker | undefined;
  #inode = -1;
  #timer: NodeJS.Timeout | undefined;
  #saving: Promise<void> = Promise.resolve();
  #writeFailing = false;
  /** How far the run before a restart read the file (the checkpoint's `read`), until resumed. */
  #readBefore: number | undefined;

  private constructor(
    options: FollowedFileOptions,
    checkpointFile: CheckpointFile | undefined,
    start: TailStart | undefined,
    readBefore: number | undefined,
  ) {
    this.#options = options;
    this.#checkpointFile = checkpointFile;
    this.#readBefore = readBefore;
    this.#tailer = new FileTailer({
      path: options.path,
      start,
      onOpen: (reason, inode, offset) => this.#opened(reason, inode, offset),
      onData: (chunk) => this.#source?.push(chunk),
      onRotatedData: (chunk) => this.#rotatedSource?.push(chunk),
      onRotatedEnd: () => {
        // The old file was read to its end: its last line needs no newline to count.
        this.#rotatedSource?.end();
        this.#rotatedSource = undefined;
      },
      isPaused: options.isFull,
      onWaiting: () =>
        options.log(`tooltrace sidecar: ${options.path} does not exist yet; waiting for it`),
      onError: (error) =>
        options.log(`tooltrace sidecar: cannot read ${options.path}: ${String(error)}`),
    });
  }

  /**
   * Checks the path and the checkpoint, reads the checkpoint (when there is one) and prepares to
   * follow `options.path`. A directory given as the file, a missing directory, a checkpoint that
   * cannot be written or is corrupt throw a {@link ConfigurationError} naming the path.
   */
  static async open(options: FollowedFileOptions): Promise<FollowedFile> {
    await checkFollowable(options.path);
    if (options.checkpoint === undefined)
      return new FollowedFile(options, undefined, undefined, undefined);
    const checkpointFile = new CheckpointFile(options.checkpoint);
    await checkpointFile.checkWritable();
    let saved;
    if (options.checkpointReset === true) {
      options.log(
        `tooltrace sidecar: --checkpoint-reset: reading ${options.path} from the start; ${checkpointFile.path} will be overwritten`,
      );
    } else {
      saved = await checkpointFile.read();
    }
    // A checkpoint of this path is where the tailer starts: its inode, offset and fingerprint.
    const resumed = saved !== undefined && saved.path === options.path ? saved : undefined;
    return new FollowedFile(options, checkpointFile, resumed, resumed?.read);
  }

  /** Spans holding the checkpoint back. */
  get pinnedSpans(): number {
    return this.#tracker?.pinnedSpans ?? 0;
  }

  start(): void {
    this.#tailer.start();
    if (this.#checkpointFile !== undefined) {
      this.#timer = setInterval(
        () => void this.saveCheckpoint(),
        this.#options.checkpointIntervalMs ?? 1000,
      );
      this.#timer.unref();
    }
  }

  /** Reads on at once (the export queue drained). */
  poke(): void {
    this.#tailer.poke();
  }

  /** Stops reading. The checkpoint is saved separately, once the last spans were exported. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#tailer.stop();
  }

  /** Writes the safe offset to the checkpoint file; logs (never throws) when it cannot. */
  saveCheckpoint(): Promise<void> {
    const tracker = this.#tracker;
    const file = this.#checkpointFile;
    if (tracker === undefined || file === undefined || this.#inode === -1) return this.#saving;
    const offset = tracker.checkpoint(this.#options.heldEvents() > 0);
    const checkpoint = {
      path: this.#options.path,
      inode: this.#inode,
      offset,
      read: tracker.read,
      fingerprint: this.#tailer.fingerprint,
    };
    // One write at a time, in order: a slow disk must not let an older offset land last.
    this.#saving = this.#saving
      .then(() => file.write(checkpoint))
      .then(
        () => {
          if (!this.#writeFailing) return;
          this.#writeFailing = false;
          this.#options.log(`tooltrace sidecar: checkpoint ${file.path} is written again`);
        },
        (error: unknown) => {
          // Once until it works again: a full disk must not also fill the log.
          if (this.#writeFailing) return;
          this.#writeFailing = true;
          this.#options.log(
            `tooltrace sidecar: cannot write checkpoint ${file.path}: ${String(error)}; retrying every period, reported once`,
          );
        },
      );
    return this.#saving;
  }

  /**
   * The last save, at shutdown: like {@link saveCheckpoint}, and when the checkpoint still cannot
   * be written, says what a restart will do, since the failure may have been reported long ago.
   */
  async saveFinalCheckpoint(): Promise<void> {
    await this.saveCheckpoint();
    const file = this.#checkpointFile;
    if (!this.#writeFailing || file === undefined) return;
    this.#options.log(
      `tooltrace sidecar: checkpoint ${file.path} was not saved at shutdown; a restart reads ${this.#options.path} again from the last one saved, and exports those calls again as identical spans`,
    );
  }

  #opened(reason: TailOpenReason, inode: number, offset: number): void {
    const { path, log, pipeline } = this.#options;
    if (reason === 'rotated') {
      // The old file is still read (its writer may not have reopened yet), into its own source.
      this.#rotatedSource = this.#source;
      log(`tooltrace sidecar: ${path} was rotated; reading the new file from the start`);
    } else if (reason === 'truncated') {
      log(`tooltrace sidecar: ${path} was truncated; reading it from the start`);
    } else if (reason === 'resumed') {
      log(`tooltrace sidecar: resuming ${path} at byte ${offset}`);
    }
    this.#inode = inode;
    if (this.#checkpointFile !== undefined) {
      // Spans of the previous generation still release their pins into the old tracker.
      // Only the file resumed at the checkpoint was read before: a new generation was not.
      const readBefore = reason === 'resumed' ? this.#readBefore : undefined;
      this.#readBefore = undefined;
      this.#tracker = new CheckpointTracker(offset, readBefore);
      pipeline.setFallbackTracker(this.#tracker);
    }
    this.#source = pipeline.source('file', this.#tracker, `--file ${path}`);
  }
}

/**
 * Refuses at start-up what `tail -F` would wait on forever: a directory, or a path whose
 * directory does not exist. A file not there yet is fine (the agent may not have started).
 */
async function checkFollowable(path: string): Promise<void> {
  const refuse = (why: string, cause?: unknown): ConfigurationError =>
    new ConfigurationError(`--file ${path} cannot be followed: ${why}`, {
      setting: '--file',
      ...(cause === undefined ? {} : { cause }),
    });
  try {
    if ((await stat(path)).isDirectory()) throw refuse('it is a directory');
    return;
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw refuse(`cannot look at it (${code ?? String(error)})`, error);
  }
  const directory = dirname(path);
  const info = await stat(directory).catch(() => undefined);
  if (info?.isDirectory() !== true) throw refuse(`its directory ${directory} does not exist`);
}
