import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** A request body read in full, or only counted once it passed the size limit. */
export interface RequestBody {
  /** Bytes received on the wire (before decompression). */
  bytes: number;
  /** The body as received; `undefined` when it was larger than the limit. */
  body: Buffer | undefined;
}

/**
 * Reads a request body, keeping at most `maxBytes` of it. A larger body is still read to its end
 * (and thrown away) so that the client reliably gets the 413 answer instead of a reset socket.
 */
export function readRequestBody(request: IncomingMessage, maxBytes: number): Promise<RequestBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.once('end', () => {
      resolve({ bytes, body: bytes <= maxBytes ? Buffer.concat(chunks, bytes) : undefined });
    });
    request.once('error', reject);
    // A client that goes away mid-body never sends 'end'; do not wait for it forever.
    request.once('close', () => {
      if (!request.complete) reject(new Error('the client closed the request before its end'));
    });
  });
}

/** The outcome of {@link decompressBody}: the plain body, or why there is none. */
export type DecompressedBody =
  | { status: 'success'; body: Buffer }
  | { status: 'unsupported'; message: string }
  | { status: 'too-large'; message: string }
  | { status: 'malformed'; message: string };

/**
 * Undoes `Content-Encoding` (`gzip`, `deflate` or none), never producing more than `maxBytes`,
 * so that a small compressed body cannot expand into gigabytes.
 */
export async function decompressBody(
  body: Buffer,
  contentEncoding: string,
  maxBytes: number,
): Promise<DecompressedBody> {
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === '' || coding === 'identity') return { status: 'success', body };
  const decompress =
    coding === 'gzip' || coding === 'x-gzip'
      ? gunzipAsync
      : coding === 'deflate'
        ? inflateAsync
        : undefined;
  if (decompress === undefined) {
    return {
      status: 'unsupported',
      message: `unsupported content encoding ${JSON.stringify(contentEncoding)}: expected gzip, deflate or none`,
    };
  }
  try {
    return { status: 'success', body: await decompress(body, { maxOutputLength: maxBytes }) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      return {
        status: 'too-large',
        message: `body is larger than ${maxBytes} bytes once decompressed`,
      };
    }
    const reason = error instanceof Error ? error.message : String(error);
    return { status: 'malformed', message: `cannot ${coding}-decompress the body: ${reason}` };
  }
}
