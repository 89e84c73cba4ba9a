import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReadAheadFile } from '../../../src/sidecar/intake/read-ahead-file.js';

describe('ReadAheadFile', () => {
  let directory: string;
  const descriptors: number[] = [];

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tooltrace-read-ahead-'));
  });
  afterEach(() => {
    for (const fd of descriptors.splice(0)) closeSync(fd);
    rmSync(directory, { recursive: true, force: true });
  });

  function open(content: Buffer): number {
    const path = join(directory, 'journal.jsonl');
    writeFileSync(path, content);
    const fd = openSync(path, 'r');
    descriptors.push(fd);
    return fd;
  }

  function collect(stream: ReadAheadFile): Promise<Buffer[]> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve(chunks));
      stream.on('error', reject);
    });
  }

  it('reads the whole file in order, in chunks of at most the chunk size', async () => {
    const content = Buffer.from(
      Array.from({ length: 500 }, (_, index) => `{"seq":${index}}\n`).join(''),
    );
    const chunks = await collect(new ReadAheadFile(open(content), 1000));
    expect(Buffer.concat(chunks).equals(content)).toBe(true);
    expect(chunks.length).toBe(Math.ceil(content.length / 1000));
    expect(chunks.every((chunk) => chunk.length <= 1000)).toBe(true);
  });

  it('keeps every chunk intact while the reader is paused and reads ahead again after resume', async () => {
    const content = Buffer.alloc(10_000);
    for (let index = 0; index < content.length; index += 1) content[index] = index % 251;
    const stream = new ReadAheadFile(open(content), 1024);
    const chunks: Buffer[] = [];
    const ended = new Promise<void>((resolve) => stream.on('end', resolve));
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunks.length === 2) {
        stream.pause();
        setTimeout(() => stream.resume(), 20);
      }
    });
    await ended;
    expect(Buffer.concat(chunks).equals(content)).toBe(true);
  });

  it('ends at once on an empty file and reads from where the descriptor stands', async () => {
    expect(await collect(new ReadAheadFile(open(Buffer.alloc(0)), 64))).toEqual([]);
    const fd = open(Buffer.from('skipped\nread\n'));
    const skip = Buffer.alloc(8);
    readSync(fd, skip, 0, 8, null);
    expect(Buffer.concat(await collect(new ReadAheadFile(fd, 64))).toString()).toBe('read\n');
  });

  it('fails the stream with the read error, for a descriptor that cannot be read', async () => {
    const path = join(directory, 'write-only');
    writeFileSync(path, 'x');
    const fd = openSync(path, 'w');
    descriptors.push(fd);
    await expect(collect(new ReadAheadFile(fd, 64))).rejects.toThrow(/EBADF/);
  });
});
