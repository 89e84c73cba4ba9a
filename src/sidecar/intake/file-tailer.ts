import { open, stat, type FileHandle } from 'node:fs/promises';

/**
 * Why the tailer (re)started reading: the first open (`opened`, or `resumed` at a checkpoint
 * whose inode matched), the path now names another file (`rotated`), or the file shrank
 * (`truncated`).
 */
export type TailOpenReason = 'opened' | 'resumed' | 'rotated' | 'truncated';

/** Options for {@link FileTailer}. */
export interface FileTailerOptions {
  path: string;
  /** Where to resume: a checkpoint's offset, used only when `startInode` is still the file's. */
  startOffset?: number;
  /** Inode the `startOffset` belongs to; another inode means the file was replaced. */
  startInode?: number;
  /**
   * How often to look for new data, rotation and truncation once at the end of the file.
   * @default 250
   */
  pollIntervalMs?: number;
  /**
   * Bytes read per call.
   * @default 1048576
   */
  chunkBytes?: number;
  /**
   * Called before any data of a newly opened file (or of a truncated one read again), with the
   * offset reading starts at: every later chunk continues from there.
   */
  onOpen: (reason: TailOpenReason, inode: number, offset: number) => void;
  /** Receives each chunk read, in file order from the last `onOpen` offset. */
  onData: (chunk: Buffer) => void;
  /** While it returns true, reading waits (intake pushes back on a full export queue). */
  isPaused: () => boolean;
  /**
   * A read error other than the file being absent (which is waited out, like `tail -F`). The
   * tailer retries at the next poll; it reports the same message only once in a row.
   */
  onError: (error: unknown) => void;
}

/**
 * Follows a file like `tail -F`: reads what is there, then polls for more; when the path names a
 * new file (rotation) it finishes the old one and starts the new one from the beginning; when the
 * file shrinks (truncation) it starts again from 0; when the file is missing it waits for it; a
 * read error is reported and retried. Polling rather than `fs.watch` because watch events are
 * lost on some file systems and across rotation, and a poll at the end of the file costs one
 * `stat`.
 */
export class FileTailer {
  readonly #options: FileTailerOptions;
  readonly #pollIntervalMs: number;
  readonly #chunkBytes: number;
  #handle: FileHandle | undefined;
  #inode = -1;
  #position = 0;
  #stopped = false;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastError = '';

  constructor(options: FileTailerOptions) {
    this.#options = options;
    this.#pollIntervalMs = options.pollIntervalMs ?? 250;
    this.#chunkBytes = options.chunkBytes ?? 1024 * 1024;
  }

  /** Inode of the file being read, `-1` before it was opened. */
  get inode(): number {
    return this.#inode;
  }

  /** Offset of the next byte to read. */
  get position(): number {
    return this.#position;
  }

  /** Starts following the file. */
  start(): void {
    this.#running ??= this.#run();
  }

  /** Reads on right away instead of at the next poll (after the queue drained, say). */
  poke(): void {
    this.#wake?.();
  }

  /** Stops reading and closes the file. Safe to call twice. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
    await this.#handle?.close().catch(() => {});
    this.#handle = undefined;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        if (await this.#step()) continue;
      } catch (error) {
        this.#report(error);
        // The handle may be what failed: open the path afresh, keeping the position.
        await this.#handle?.close().catch(() => {});
        this.#handle = undefined;
      }
      if (!this.#stopped) await this.#sleep();
    }
  }

  /** One read, open or check; `true` when there may be more to do at once. */
  async #step(): Promise<boolean> {
    if (this.#handle === undefined) return this.#openFile();
    if (this.#options.isPaused()) return false;
    // A fresh buffer per read: lines handed out are views of it and may outlive the next read.
    const buffer = Buffer.allocUnsafe(this.#chunkBytes);
    const { bytesRead } = await this.#handle.read(buffer, 0, buffer.length, this.#position);
    if (this.#stopped) return false;
    if (bytesRead > 0) {
      this.#position += bytesRead;
      this.#lastError = '';
      this.#options.onData(buffer.subarray(0, bytesRead));
      return true;
    }
    return this.#checkReplaced();
  }

  async #openFile(): Promise<boolean> {
    let handle: FileHandle;
    try {
      handle = await open(this.#options.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    const info = await handle.stat().catch(async (error: unknown) => {
      await handle.close().catch(() => {});
      throw error;
    });
    if (this.#stopped) {
      await handle.close().catch(() => {});
      return false;
    }
    const first = this.#inode === -1;
    const sameFile = info.ino === this.#inode;
    this.#handle = handle;
    let reason: TailOpenReason;
    if (sameFile) {
      // Reopened after a read error: carry on where we were.
      return true;
    } else if (
      first &&
      this.#options.startInode === info.ino &&
      (this.#options.startOffset ?? 0) <= info.size
    ) {
      this.#position = this.#options.startOffset ?? 0;
      reason = 'resumed';
    } else {
      this.#position = 0;
      reason = first ? 'opened' : 'rotated';
    }
    this.#inode = info.ino;
    this.#options.onOpen(reason, info.ino, this.#position);
    return true;
  }

  /** At the end of the file: has the path been rotated to a new file, or truncated? */
  async #checkReplaced(): Promise<boolean> {
    let info;
    try {
      info = await stat(this.#options.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    if (this.#stopped) return false;
    if (info.ino !== this.#inode) {
      // The old file was read to its end above; the new one starts from 0.
      await this.#handle?.close().catch(() => {});
      this.#handle = undefined;
      return this.#openFile();
    }
    if (info.size < this.#position) {
      this.#position = 0;
      this.#options.onOpen('truncated', this.#inode, 0);
      return true;
    }
    return false;
  }

  #report(error: unknown): void {
    const message = String(error);
    if (message === this.#lastError) return;
    this.#lastError = message;
    this.#options.onError(error);
  }

  #sleep(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = () => {
        if (this.#timer !== undefined) clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#wake = undefined;
        resolve();
      };
      // Not unref'd: following the file is what keeps a `--file` sidecar running.
      this.#timer = setTimeout(this.#wake, this.#pollIntervalMs);
    });
  }
}
