import { open, readFile, rename } from 'node:fs/promises';

/** What a checkpoint records: which file (by path and inode) and how far it was safely read. */
export interface Checkpoint {
  path: string;
  /** Inode of the file when the checkpoint was written; a rotated file has another one. */
  inode: number;
  /** Byte offset up to which every tool call's span was exported. */
  offset: number;
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
        this.#last = text;
        return { path: value.path, inode: value.inode!, offset: value.offset! };
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
