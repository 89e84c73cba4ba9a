import { constants } from 'node:fs';
import { lstat, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigurationError } from '../../errors/index.js';
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
   * Byte offset up to which lines were read (and their calls measured): a restart reads again
   * from `offset`, and does not measure the calls that end before this a second time. Absent in
   * checkpoints written by earlier versions.
   */
  read?: number;
  /**
   * The file's first bytes when the checkpoint was written: a file truncated and written again
   * keeps its inode, not these. Absent in checkpoints written by earlier versions.
   */
  fingerprint?: FileFingerprint;
}

/** Create a new file, never through a symbolic link, never over an existing one; owner only. */
const CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const CREATE_MODE = 0o600;

/**
 * Reads and writes a checkpoint file. A write goes to a temporary file beside it (same
 * directory, so the rename is atomic), created exclusively and never through a symbolic link,
 * synced, renamed over the old one, and the directory synced: a crash — even of the machine —
 * leaves either the previous checkpoint or the new one, never a torn file. A checkpoint that
 * cannot be parsed is an error, not "no checkpoint": silently starting over would export the
 * whole file again.
 */
export class CheckpointFile {
  readonly #path: string;
  readonly #temporary: string;
  #last = '';

  constructor(path: string) {
    this.#path = path;
    this.#temporary = join(dirname(path), `.${basename(path)}.tmp`);
  }

  /** Where the checkpoint is stored. */
  get path(): string {
    return this.#path;
  }

  /**
   * Checks at start-up that the checkpoint can be kept: its directory exists, the path is not
   * a directory, and a file can be created beside it. Throws a {@link ConfigurationError}
   * naming the path otherwise.
   */
  async checkWritable(): Promise<void> {
    const directory = dirname(this.#path);
    const directoryInfo = await stat(directory).catch(() => undefined);
    if (directoryInfo?.isDirectory() !== true) {
      throw refused(this.#path, `its directory ${directory} does not exist`);
    }
    const info = await lstat(this.#path).catch(() => undefined);
    if (info !== undefined && !info.isFile()) {
      throw refused(this.#path, 'it exists and is not a regular file');
    }
    try {
      const handle = await this.#createTemporary();
      await handle.close();
      await unlink(this.#temporary);
    } catch (error) {
      throw refused(
        this.#path,
        `cannot create a file in ${directory} (${errorCode(error)})`,
        error,
      );
    }
  }

  /**
   * The stored checkpoint, or `undefined` when there is none. Throws a
   * {@link ConfigurationError} naming the path when the file cannot be read or is not a
   * checkpoint.
   */
  async read(): Promise<Checkpoint | undefined> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw refused(this.#path, `cannot read it (${errorCode(error)})`, error);
    }
    const checkpoint = parseCheckpoint(text);
    if (checkpoint === undefined) {
      throw new ConfigurationError(
        `--checkpoint ${this.#path} is corrupt (not a tooltrace checkpoint); remove it, or pass --checkpoint-reset to read the file from the start`,
        { setting: '--checkpoint' },
      );
    }
    this.#last = text;
    return checkpoint;
  }

  /** Stores `checkpoint`; does nothing when it equals the last one written. */
  async write(checkpoint: Checkpoint): Promise<void> {
    const text = `${JSON.stringify(checkpoint)}\n`;
    if (text === this.#last) return;
    const handle = await this.#createTemporary();
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(this.#temporary, this.#path);
    await syncDirectory(dirname(this.#path));
    this.#last = text;
  }

  /** The temporary file, created afresh: one left by a crash (or planted) is removed first. */
  async #createTemporary() {
    try {
      return await open(this.#temporary, CREATE_FLAGS, CREATE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // unlink removes a symbolic link itself, never what it points to.
      await unlink(this.#temporary);
      return open(this.#temporary, CREATE_FLAGS, CREATE_MODE);
    }
  }
}

/** Makes a rename in `directory` durable; file systems that cannot sync a directory are let be. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
    await handle.sync();
  } catch {
    // Not every platform or file system syncs directories; the file itself was synced.
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** The checkpoint in `text`, or `undefined` when it is not one. */
function parseCheckpoint(text: string): Checkpoint | undefined {
  let value: Partial<Checkpoint>;
  try {
    value = JSON.parse(text) as Partial<Checkpoint>;
  } catch {
    return undefined;
  }
  if (
    value === null ||
    typeof value !== 'object' ||
    typeof value.path !== 'string' ||
    !Number.isSafeInteger(value.inode) ||
    !Number.isSafeInteger(value.offset) ||
    value.offset! < 0
  ) {
    return undefined;
  }
  const checkpoint: Checkpoint = { path: value.path, inode: value.inode!, offset: value.offset! };
  if (Number.isSafeInteger(value.read) && value.read! >= value.offset!)
    checkpoint.read = value.read!;
  if (value.fingerprint === undefined) return checkpoint;
  return isFingerprint(value.fingerprint)
    ? { ...checkpoint, fingerprint: value.fingerprint }
    : undefined;
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

function refused(path: string, why: string, cause?: unknown): ConfigurationError {
  return new ConfigurationError(`--checkpoint ${path} cannot be used: ${why}`, {
    setting: '--checkpoint',
    ...(cause === undefined ? {} : { cause }),
  });
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
