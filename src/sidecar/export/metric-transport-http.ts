import { Agent as HttpAgent, request as httpRequest, STATUS_CODES } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import { isRetryableHttpStatus, parseRetryAfter } from './export-outcome.js';
import type { ExportTls } from './export-tls.js';
import { decodeRpcStatus } from './otlp-response.js';
import { USER_AGENT } from './user-agent.js';

/** Answer bodies are read up to this size: a status message, not a web page. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Where and how metrics requests go, for {@link httpMetricTransport} and `grpcMetricTransport`. */
export interface MetricTransportOptions {
  url: string;
  headers: Record<string, string>;
  /** `application/x-protobuf` or `application/json` (HTTP only). */
  contentType?: string;
  tls?: ExportTls;
}

/**
 * The metrics export's OTLP/HTTP transport, in place of the stock exporter's: it sends the
 * sidecar's one `User-Agent` (the stock transport always sends its own, or appends it to ours)
 * and says in a failure what the endpoint answered: the status and its `google.rpc.Status`
 * message. Serializing, the bound on concurrent exports and the timeout stay the stock
 * exporter's.
 */
export function httpMetricTransport(options: MetricTransportOptions): IExporterTransport {
  const url = new URL(options.url);
  const https = url.protocol === 'https:';
  const agent = https
    ? new HttpsAgent({ keepAlive: true, ...options.tls })
    : new HttpAgent({ keepAlive: true });
  const send = https ? httpsRequest : httpRequest;
  const headers = {
    ...options.headers,
    'User-Agent': USER_AGENT,
    'Content-Type': options.contentType ?? 'application/x-protobuf',
  };
  return {
    send(data, timeoutMillis) {
      return new Promise<ExportResponse>((resolve) => {
        const request = send(url, {
          method: 'POST',
          agent,
          headers: { ...headers, 'Content-Length': String(data.byteLength) },
          timeout: timeoutMillis,
        });
        request.once('timeout', () =>
          request.destroy(new Error(`no answer within ${timeoutMillis} ms`)),
        );
        request.once('error', (error) =>
          resolve({ status: 'retryable', error: new Error(`${url.href}: ${error.message}`) }),
        );
        request.once('response', (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            if (size >= MAX_ANSWER_BYTES) return;
            size += chunk.length;
            chunks.push(chunk);
          });
          response.once('error', (error) =>
            resolve({ status: 'retryable', error: new Error(`${url.href}: ${error.message}`) }),
          );
          response.once('end', () => {
            const status = response.statusCode ?? 0;
            const body = Buffer.concat(chunks);
            if (status >= 200 && status < 300) {
              resolve({ status: 'success', data: body });
              return;
            }
            const contentType = (response.headers['content-type'] ?? '').toLowerCase();
            const said = decodeRpcStatus(body, contentType)?.message;
            const error = new Error(
              `${status} ${STATUS_CODES[status] ?? ''}`.trim() +
                ` from ${url.href}${said === undefined || said === '' ? '' : `: ${said}`}`,
            );
            const retryAfter = response.headers['retry-after'];
            if (isRetryableHttpStatus(status)) {
              const wait = parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : undefined);
              resolve({
                status: 'retryable',
                error,
                ...(wait === undefined ? {} : { retryInMillis: wait }),
              });
            } else {
              resolve({ status: 'failure', error });
            }
          });
        });
        request.end(data);
      });
    },
    shutdown() {
      agent.destroy();
    },
  };
}
