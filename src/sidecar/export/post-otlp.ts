import { request as httpRequest, type Agent, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Answer bodies are read up to this size: a status message, not a web page. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** An OTLP/HTTP answer as the exporters read it. */
export interface OtlpHttpAnswer {
  status: number;
  /** The `Content-Type`, in lowercase (`''` when absent). */
  contentType: string;
  retryAfter: string | undefined;
  /** At most 64 KiB of it. */
  body: Buffer;
}

/** How {@link postOtlp} sends. */
export interface PostOtlpOptions {
  /** An `http.Agent`, or an `https.Agent` for an `https://` URL. */
  agent: Agent;
  headers: Record<string, string>;
  /** No answer by then destroys the request (an error). */
  timeoutMs: number;
  /** Sees the request before its body is written (to follow when the body is written out). */
  watch?: (request: ClientRequest) => void;
}

/**
 * POSTs `body` to an OTLP/HTTP endpoint and resolves with the answer once its body was read (up
 * to a limit), whatever its status; rejects when there is no answer (connection, timeout). The
 * span exporter and the metrics transport both send this way, each reading the answer its own.
 */
export function postOtlp(
  url: URL,
  body: Uint8Array,
  options: PostOtlpOptions,
): Promise<OtlpHttpAnswer> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: 'POST',
      agent: options.agent,
      headers: { ...options.headers, 'Content-Length': String(body.byteLength) },
      timeout: options.timeoutMs,
    });
    request.once('timeout', () =>
      request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
    );
    request.once('error', reject);
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size >= MAX_ANSWER_BYTES) return;
        size += chunk.length;
        chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('end', () => {
        const retryAfter: string | string[] | undefined = response.headers['retry-after'];
        resolve({
          status: response.statusCode ?? 0,
          contentType: (response.headers['content-type'] ?? '').toLowerCase(),
          retryAfter: typeof retryAfter === 'string' ? retryAfter : retryAfter?.[0],
          body: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES),
        });
      });
    });
    options.watch?.(request);
    request.end(body);
  });
}
