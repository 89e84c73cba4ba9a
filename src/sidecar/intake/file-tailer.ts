import { open, stat, type FileHandle } from 'node:fs/promises';
import {
  FINGERPRINT_BYTES,
  fingerprintOf,
  readHead,
  type FileFingerprint,
} from './file-fingerprint.js';

/**
 * Why the tailer (re)started reading: the first open (`opened`, or `resumed` at a checkpoint
 * whose inode and fingerprint matched), the path now names another file (`rotated`), or the
 * content changed under the same inode (`truncated`: the file shrank, or its first bytes are no
 * longer the ones read — including while the sidecar was down).
 */
export type TailOpenReason = 'opened' | 'resumed' | 'rotated' | 'truncated';

/** Where a checkpoint says reading stopped. */
export interface TailStart {
  /** Inode the offset belongs to; another inode means the file was replaced. */
  inode: number;
  /** Byte offset to resume at. */
  offset: number;
  /** The first bytes the offset belongs to; absent in checkpoints written before it existed. */
  fingerprint?: FileFingerprint;
}

/** How often to look for new data, rotation and truncation once at the end of the file. */
const POLL_INTERVAL_MS = 250;
/** Bytes read per call. */
const CHUNK_BYTES = 1024 * 1024;
/**
 * How long a file renamed away (rename-and-create rotation) is still read after the path names
 * a new one: the writer may not have reopened yet.
 */
const ROTATE_WAIT_MS = 5000;

/** Options for {@link FileTailer}. */
export interface FileTailerOptions {
  path: string;
  /** Where to resume: used only when the file is still the one the checkpoint describes. */
  start?: TailStart;
  /**
   * Called before any data of a newly opened file (or of a truncated one read again), with the
   * offset reading starts at: every later chunk continues from there.
   */
  onOpen: (reason: TailOpenReason, inode: number, offset: number) => void;
  /** Receives each chunk read, in file order from the last `onOpen` offset. */
  onData: (chunk: Buffer) => void;
  /** Data written to the previous file after rotation was noticed (for {@link ROTATE_WAIT_MS}). */
  onRotatedData: (chunk: Buffer) => void;
  /** The previous file was read to its end and closed. */
  onRotatedEnd: () => void;
  /** While it returns true, reading waits (intake pushes back on a full export queue). */
  isPaused: () => boolean;
  /** Called once when the file is not there at the first attempt to open it (it is waited for). */
  onWaiting?: () => void;
  /**
   * A read error other than the file being absent (which is waited out, like `tail -F`). The
   * tailer retries at the next poll; it reports the same message only once in a row.
   */
  onError: (error: unknown) => void;
}

/** A file renamed away, still read until its writer has surely moved on. */
interface RotatedFile {
  handle: FileHandle;
  position: number;
  until: number;
}

/**
 * Follows a file like `tail -F`: reads what is there, then polls for more. When the path names a
 * new file (rotation) it reads the new one from the beginning and keeps reading the old one for
 * a while ({@link ROTATE_WAIT_MS}); when the file shrinks or its first bytes change (truncation,
 * checked before every chunk is handed on, so a file truncated and regrown within one poll is
 * caught) it starts again from 0; when the file is missing it waits for it; a read error is reported and retried.
 * Polling rather than `fs.watch` because watch events are lost on some file systems and across
 * rotation, and a poll at the end of the file costs one `stat` and one 1 KiB read.
 */
export class FileTailer {
  readonly #options: FileTailerOptions;
  #handle: FileHandle | undefined;
  #rotated: RotatedFile | undefined;
  #inode = -1;
  #position = 0;
  /** The first `min(position, FINGERPRINT_BYTES)` bytes of the current file. */
  #head: Buffer = Buffer.alloc(0);
  #fingerprint: FileFingerprint | undefined;
  #stopped = false;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastError = '';
  #waitingReported = false;

  constructor(options: FileTailerOptions) {
    this.#options = options;
  }

  /** Offset of the next byte to read. */
  get position(): number {
    return this.#position;
  }

  /** The fingerprint of the bytes read so far of the current file (for its checkpoint). */
  get fingerprint(): FileFingerprint {
    this.#fingerprint ??= fingerprintOf(this.#head);
    return this.#fingerprint;
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
    await this.#rotated?.handle.close().catch(() => {});
    this.#rotated = undefined;
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
    if (this.#rotated !== undefined && (await this.#readRotated(this.#rotated))) return true;
    // A fresh buffer per read: lines handed out are views of it and may outlive the next read.
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    const { bytesRead } = await this.#handle.read(buffer, 0, buffer.length, this.#position);
    if (this.#stopped) return false;
    if (bytesRead === 0) return this.#checkReplaced();
    // The chunk belongs to the content read so far only if that content is still in place.
    if (!(await this.#headUnchanged(this.#handle))) {
      this.#restart();
      return true;
    }
    const chunk = buffer.subarray(0, bytesRead);
    this.#extendHead(chunk);
    this.#position += bytesRead;
    this.#lastError = '';
    this.#options.onData(chunk);
    return true;
  }

  async #openFile(): Promise<boolean> {
    let handle: FileHandle;
    try {
      handle = await open(this.#options.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // Missing after a rotation is the normal gap before the new file: only the first is told.
      if (this.#inode === -1 && !this.#waitingReported) {
        this.#waitingReported = true;
        this.#options.onWaiting?.();
      }
      return false;
    }
    try {
      const info = await handle.stat();
      if (this.#stopped) {
        await handle.close();
        return false;
      }
      if (info.ino === this.#inode) {
        // Reopened after a read error: carry on where we were.
        this.#handle = handle;
        return true;
      }
      const first = this.#inode === -1;
      const start = this.#options.start;
      let reason: TailOpenReason = first ? 'opened' : 'rotated';
      let head: Buffer = Buffer.alloc(0);
      let position = 0;
      if (first && start !== undefined && start.inode === info.ino) {
        const resumed = start.offset <= info.size ? await verifiedHead(handle, start) : undefined;
        if (resumed === undefined) {
          reason = 'truncated';
        } else {
          reason = 'resumed';
          head = resumed;
          position = start.offset;
        }
      }
      this.#handle = handle;
      this.#inode = info.ino;
      this.#position = position;
      this.#setHead(head);
      this.#options.onOpen(reason, info.ino, position);
      return true;
    } catch (error) {
      if (this.#handle !== handle) await handle.close().catch(() => {});
      throw error;
    }
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
      // Renamed away: the writer may still append to it, so it is read on for a while.
      if (this.#rotated !== undefined) await this.#closeRotated(this.#rotated);
      this.#rotated = {
        handle: this.#handle!,
        position: this.#position,
        until: Date.now() + ROTATE_WAIT_MS,
      };
      this.#handle = undefined;
      return this.#openFile();
    }
    if (info.size < this.#position || !(await this.#headUnchanged(this.#handle!))) {
      this.#restart();
      return true;
    }
    return false;
  }

  /** One read of the renamed-away file; `true` when it gave data. Closes it once its time is up. */
  async #readRotated(rotated: RotatedFile): Promise<boolean> {
    if (await this.#readRotatedChunk(rotated)) return true;
    if (Date.now() >= rotated.until) await this.#closeRotated(rotated);
    return false;
  }

  async #readRotatedChunk(rotated: RotatedFile): Promise<boolean> {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    const { bytesRead } = await rotated.handle.read(buffer, 0, buffer.length, rotated.position);
    if (bytesRead === 0) return false;
    rotated.position += bytesRead;
    this.#options.onRotatedData(buffer.subarray(0, bytesRead));
    return true;
  }

  /** Reads the renamed-away file to its end, closes it and says so. */
  async #closeRotated(rotated: RotatedFile): Promise<void> {
    while (await this.#readRotatedChunk(rotated)) {
      // Read on: a second rotation came before the first one's wait was over.
    }
    this.#rotated = undefined;
    await rotated.handle.close().catch(() => {});
    this.#options.onRotatedEnd();
  }

  /** Whether the file still starts with the bytes read from it so far. */
  async #headUnchanged(handle: FileHandle): Promise<boolean> {
    const head = this.#head;
    if (head.length === 0) return true;
    return head.equals(await readHead(handle, head.length));
  }

  /** The content under the inode changed: read it again from the start. */
  #restart(): void {
    this.#position = 0;
    this.#setHead(Buffer.alloc(0));
    this.#options.onOpen('truncated', this.#inode, 0);
  }

  #setHead(head: Buffer): void {
    this.#head = head;
    this.#fingerprint = undefined;
  }

  #extendHead(chunk: Buffer): void {
    const head = this.#head;
    if (head.length >= FINGERPRINT_BYTES || head.length !== this.#position) return;
    const take = chunk.subarray(0, FINGERPRINT_BYTES - head.length);
    this.#setHead(Buffer.concat([head, take]));
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
      this.#timer = setTimeout(this.#wake, POLL_INTERVAL_MS);
    });
  }
}

/**
 * The head to keep when the file still holds the content `start` describes (its fingerprint
 * matches), else `undefined`. A checkpoint without a fingerprint trusts the inode and size.
 */
async function verifiedHead(handle: FileHandle, start: TailStart): Promise<Buffer | undefined> {
  const keep = Math.min(start.offset, FINGERPRINT_BYTES);
  const expected = start.fingerprint;
  if (expected === undefined) return readHead(handle, keep);
  const head = await readHead(handle, expected.bytes);
  if (head.length !== expected.bytes || fingerprintOf(head).sha256 !== expected.sha256) {
    return undefined;
  }
  return head.subarray(0, Math.min(keep, head.length));
}
