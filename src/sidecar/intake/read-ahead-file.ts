import { read } from 'node:fs';
import { Readable } from 'node:stream';

/**
 * A regular file read from an open descriptor with the next read always in flight: while the
 * sidecar replays one chunk (about 15 ms for 1 MiB of journal), the thread pool already reads
 * the next. `fs.createReadStream` asks for the next chunk only after the last one was handled,
 * and the main thread then waits for every read: 7% of a one-shot `tooltrace sidecar --stdin <
 * journal` was that wait (CPU profile, 240k lines). Holds at most the chunk in flight, one chunk
 * ready and what the stream buffers (one `highWaterMark`, a chunk), so about three chunks.
 * Reads from the descriptor's current position on; never closes it.
 */
export class ReadAheadFile extends Readable {
  readonly #fd: number;
  readonly #chunkBytes: number;
  #reading = false;
  /** A chunk read before it was asked for; `null` once the end of the file was reached. */
  #ready: Buffer | null | undefined;
  /** The stream asked for data while nothing was ready. */
  #wanted = false;

  constructor(fd: number, chunkBytes: number) {
    super({ highWaterMark: chunkBytes });
    this.#fd = fd;
    this.#chunkBytes = chunkBytes;
  }

  override _read(): void {
    const ready = this.#ready;
    if (ready === undefined) {
      this.#wanted = true;
      this.#readNext();
      return;
    }
    this.#ready = undefined;
    if (ready !== null) this.#readNext();
    this.push(ready);
  }

  #readNext(): void {
    if (this.#reading || this.destroyed) return;
    this.#reading = true;
    // A fresh buffer per read: the stream may still hold earlier chunks (while paused), and the
    // line splitter hands out views of them.
    const buffer = Buffer.allocUnsafe(this.#chunkBytes);
    read(this.#fd, buffer, 0, buffer.length, null, (error, bytesRead) => {
      this.#reading = false;
      if (error !== null) {
        this.destroy(error);
        return;
      }
      const chunk = bytesRead === 0 ? null : buffer.subarray(0, bytesRead);
      if (!this.#wanted) {
        this.#ready = chunk;
        return;
      }
      this.#wanted = false;
      // The next read starts before this chunk is handed over, so it runs while it is replayed.
      if (chunk !== null) this.#readNext();
      this.push(chunk);
    });
  }
}
