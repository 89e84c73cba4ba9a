import { open, stat, type FileHandle } from 'node:fs/promises';

/** Why the tailer went back to the start of a file. */
export type TailReset = 'rotated' | 'truncated';

/** Options for {@link FileTailer}. */
export interface FileTailerOptions {
  path: string;
  /** Where to start reading: from a checkpoint, when its inode is still the file's. */
  startOffset?: number;
  /** Inode the `startOffset` belongs to; another inode means the file was rotated. */
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
  /** Receives each chunk read and the file offset of its first byte. */
  onData: (chunk: Buffer, offset: number) => void;
  /** Called when the file was replaced (rotation) or shrank (truncation), before reading anew. */
  onReset: (reason: TailReset, inode: number) => void;
  /** While it returns true, reading waits (intake pushes back on a full export queue). */
  isPaused: () => boolean;
  /** A read error other than the file being absent (which is waited out, like `tail -F`). */
  onError: (error: unknown) => void;
}

/**
 * Follows a file like `tail -F`: reads what is there, then polls for more; when the path names a
 * new file (rotation) it finishes the old one and starts the new one from the beginning; when the
 * file shrinks (truncation) it starts again from 0; when the file is missing it waits for it.
 * Polling rather than `fs.watch` because watch events are lost on some file systems and across
 * rotation, and a poll at the end of the file costs one `stat`.
 */
export class FileTailer {
  readonly #options: FileTailerOptions;
  readonly #pollIntervalMs: number;
  readonly #buffer: Buffer;
  #handle: FileHandle | undefined;
  #inode = -1;
  #position = 0;
  #stopped = false;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: FileTailerOptions) {
    this.#options = options;
    this.#pollIntervalMs = options.pollIntervalMs ?? 250;
    this.#buffer = Buffer.allocUnsafe(options.chunkBytes ?? 1024 * 1024);
  }

  /** Inode of the file being read, `-1` before it was opened. */
  get inode(): number {
    return this.#inode;
  }

  /** Offset of the next byte to read. */
  get position(): number {
    return this.#position;
  }

  /** Starts following the file; resolves once the loop runs. */
  start(): void {
    this.#running ??= this.#run().catch((error: unknown) => this.#options.onError(error));
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

  /** Reads to the current end of the file once, without waiting for more (tests, shutdown). */
  async #run(): Promise<void> {
    while (!this.#stopped) {
      if (this.#handle === undefined && !(await this.#openFile())) {
        await this.#sleep();
        continue;
      }
      if (this.#options.isPaused()) {
        await this.#sleep();
        continue;
      }
      const { bytesRead } = await this.#handle!.read(
        this.#buffer,
        0,
        this.#buffer.length,
        this.#position,
      );
      if (this.#stopped) break;
      if (bytesRead > 0) {
        const offset = this.#position;
        this.#position += bytesRead;
        // Copy: the buffer is reused for the next read while lines may still refer to it.
        this.#options.onData(Buffer.from(this.#buffer.subarray(0, bytesRead)), offset);
        continue;
      }
      if (!(await this.#checkReplaced())) await this.#sleep();
    }
  }

  async #openFile(): Promise<boolean> {
    let handle: FileHandle;
    try {
      handle = await open(this.#options.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    const info = await handle.stat();
    const first = this.#inode === -1;
    this.#handle = handle;
    if (
      first &&
      this.#options.startInode === info.ino &&
      (this.#options.startOffset ?? 0) <= info.size
    ) {
      this.#position = this.#options.startOffset ?? 0;
    } else if (first && this.#options.startInode === undefined) {
      this.#position = Math.min(this.#options.startOffset ?? 0, info.size);
    } else {
      this.#position = 0;
    }
    this.#inode = info.ino;
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
    if (info.ino !== this.#inode) {
      await this.#handle?.close().catch(() => {});
      this.#handle = undefined;
      if (await this.#openFile()) this.#options.onReset('rotated', this.#inode);
      return true;
    }
    if (info.size < this.#position) {
      this.#position = 0;
      this.#options.onReset('truncated', this.#inode);
      return true;
    }
    return false;
  }

  #sleep(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = () => {
        if (this.#timer !== undefined) clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#wake = undefined;
        resolve();
      };
      this.#timer = setTimeout(this.#wake, this.#pollIntervalMs);
    });
  }
}
