import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

/** How many leading bytes identify a file's content (the Collector's filelog receiver uses 1000). */
export const FINGERPRINT_BYTES = 1024;

/**
 * What identifies a file's content besides its inode: a digest of its first `bytes` bytes. A
 * file truncated and written again (logrotate's `copytruncate`) keeps its inode but, as soon as
 * its first line differs, not its fingerprint.
 */
export interface FileFingerprint {
  /** How many leading bytes the digest covers (at most {@link FINGERPRINT_BYTES}). */
  bytes: number;
  /** SHA-256 of those bytes, lowercase hex. */
  sha256: string;
}

/** The fingerprint of `head`, the first bytes of a file. */
export function fingerprintOf(head: Uint8Array): FileFingerprint {
  return { bytes: head.length, sha256: createHash('sha256').update(head).digest('hex') };
}

/** Reads the first `length` bytes of `handle`; fewer when the file is shorter. */
export async function readHead(handle: FileHandle, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}
