import { createGunzip } from 'node:zlib';

/** A gzip body that inflates beyond the limit it was given. */
export class InflatedTooLargeError extends RangeError {
  constructor(readonly maxBytes: number) {
    super(`the body inflates to more than ${maxBytes} bytes`);
    this.name = new.target.name;
  }
}

/**
 * Inflates a gzip body given as the chunks it arrived in, as a stream: the input is never joined
 * into one buffer, and zlib works on the thread pool a piece at a time, so no step holds the event
 * loop for long. Resolves with the inflated chunks; rejects with {@link InflatedTooLargeError}
 * once the output passes `maxBytes` (a gzip bomb is stopped there, not inflated whole), or with
 * zlib's error for a body that is not gzip.
 */
export function gunzipChunks(chunks: readonly Uint8Array[], maxBytes: number): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip();
    const output: Buffer[] = [];
    let size = 0;
    gunzip.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        output.length = 0;
        gunzip.destroy(new InflatedTooLargeError(maxBytes));
        return;
      }
      output.push(chunk);
    });
    gunzip.once('error', reject);
    gunzip.once('end', () => resolve(output));
    for (const chunk of chunks) gunzip.write(chunk);
    gunzip.end();
  });
}
