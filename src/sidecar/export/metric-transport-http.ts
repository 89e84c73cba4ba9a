import { Agent as HttpAgent, STATUS_CODES } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import { isRetryableHttpStatus } from './export-outcome.js';
import { parseRetryAfter } from '../../wire/index.js';
import type { ExportTls } from './export-tls.js';
import { decodeRpcStatus } from '../../otlp/index.js';
import { postOtlp, type OtlpHttpAnswer } from './post-otlp.js';
import { USER_AGENT } from '../../user-agent.js';

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
  const headers = {
    ...options.headers,
    'User-Agent': USER_AGENT,
    'Content-Type': options.contentType ?? 'application/x-protobuf',
  };
  /** The transport's reading of an answer: success, or why not and whether to try again. */
  const outcome = (answer: OtlpHttpAnswer): ExportResponse => {
    const { status } = answer;
    if (status >= 200 && status < 300) return { status: 'success', data: answer.body };
    const said = decodeRpcStatus(answer.body, answer.contentType)?.message;
    const error = new Error(
      `${status} ${STATUS_CODES[status] ?? ''}`.trim() +
        ` from ${url.href}${said === undefined || said === '' ? '' : `: ${said}`}`,
    );
    if (!isRetryableHttpStatus(status)) return { status: 'failure', error };
    const wait = parseRetryAfter(answer.retryAfter);
    return { status: 'retryable', error, ...(wait === undefined ? {} : { retryInMillis: wait }) };
  };
  return {
    send(data, timeoutMillis) {
      return postOtlp(url, data, { agent, headers, timeoutMs: timeoutMillis }).then(
        outcome,
        (error: Error): ExportResponse => ({
          status: 'retryable',
          error: new Error(`${url.href}: ${error.message}`),
        }),
      );
    },
    shutdown() {
      agent.destroy();
    },
  };
}
