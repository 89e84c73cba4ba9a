import { open, readFile, rename } from 'node:fs/promises';
import { FINGERPRINT_BYTES, type FileFingerprint } from './file-fingerprint.js';

/**
 * What a checkpoint records: which file (by path, inode and the fingerprint of its first bytes)
 * and how far it was safely read.
 */
export interface Checkpoint {
  path: string;
  /** Inode of the file when the checkpoint was written; a rotated file has another one. */
  inode: number;
  /** Byte offset up to which every tool call's span was exported. */
  offset: number;
  /**
   * The file's first bytes when the checkpoint was written: a file truncated and written again
   * keeps its inode, not these. Absent in checkpoints written by earlier versions.
   */
  fingerprint?: FileFingerprint;
}

/**
 * Reads and writes a checkpoint file. A write goes to a temporary file that is synced and then
 * renamed over the old one, so a crash — even of the machine — leaves either the previous
 * checkpoint or the new one, never a torn file.
 */
export class CheckpointFile {
  readonly #path: string;
  #last = '';

  constructor(path: string) {
    this.#path = path;
  }

  /** Where the checkpoint is stored. */
  get path(): string {
    return this.#path;
  }

  /** The stored checkpoint, or `undefined` when there is none or it is unreadable. */
  async read(): Promise<Checkpoint | undefined> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const value = JSON.parse(text) as Partial<Checkpoint>;
      if (
        typeof value.path === 'string' &&
        Number.isSafeInteger(value.inode) &&
        Number.isSafeInteger(value.offset) &&
        (value.offset ?? -1) >= 0
      ) {
        const fingerprint = value.fingerprint;
        if (fingerprint === undefined) {
          this.#last = text;
          return { path: value.path, inode: value.inode!, offset: value.offset! };
        }
        if (isFingerprint(fingerprint)) {
          this.#last = text;
          return { path: value.path, inode: value.inode!, offset: value.offset!, fingerprint };
        }
      }
    } catch {
      // A corrupt checkpoint is treated as none: reading starts over, duplicates are identical.
    }
    return undefined;
  }

  /** Stores `checkpoint`; does nothing when it equals the last one written. */
  async write(checkpoint: Checkpoint): Promise<void> {
    const text = `${JSON.stringify(checkpoint)}\n`;
    if (text === this.#last) return;
    const temporary = `${this.#path}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, this.#path);
    this.#last = text;
  }
}

function isFingerprint(value: unknown): value is FileFingerprint {
  if (value === null || typeof value !== 'object') return false;
  const { bytes, sha256 } = value as Partial<FileFingerprint>;
  return (
    Number.isSafeInteger(bytes) &&
    bytes! >= 0 &&
    bytes! <= FINGERPRINT_BYTES &&
    typeof sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(sha256)
  );
}
