import { isIP } from 'node:net';
import { checkServerIdentity } from 'node:tls';
import { Client, credentials, Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import type { OtlpEndpointOptions } from './export-outcome.js';
import { USER_AGENT } from '../../user-agent.js';

/**
 * gRPC codes OTLP/gRPC says to retry, for spans and metrics alike. (The span exporter also
 * retries `RESOURCE_EXHAUSTED` when the server sent a `RetryInfo`.)
 */
export const RETRYABLE_GRPC_CODES: ReadonlySet<GrpcStatus> = new Set([
  GrpcStatus.CANCELLED,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.ABORTED,
  GrpcStatus.OUT_OF_RANGE,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
]);

/**
 * The grpc-js client the span and metrics exports send with: plaintext or TLS by the URL's
 * scheme (port 4317 unless given), grpc-js's own retries off (the callers decide), the one
 * tooltrace primary user agent (grpc-js adds its `grpc-node-js/…` after it), and the headers as
 * metadata.
 */
export function otlpGrpcClient(options: OtlpEndpointOptions): {
  client: Client;
  metadata: Metadata;
} {
  const url = new URL(options.url);
  const tls = url.protocol === 'https:';
  const port = url.port === '' ? (tls ? '443' : '4317') : url.port;
  // grpc-js sends the target's host as the TLS server name (SNI), and Node 26 refuses an IP
  // address there (RFC 6066 allows host names only). For an IP target the name sent is a
  // reserved one that no server routes on, and the certificate is still checked against the IP.
  const ipAddress = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const byAddress = tls && isIP(ipAddress) !== 0;
  const client = new Client(
    `${url.hostname}:${port}`,
    tls
      ? credentials.createSsl(
          options.tls?.ca ?? null,
          options.tls?.key ?? null,
          options.tls?.cert ?? null,
          byAddress
            ? {
                checkServerIdentity: (_name, certificate) =>
                  checkServerIdentity(ipAddress, certificate),
              }
            : {},
        )
      : credentials.createInsecure(),
    {
      ...(byAddress ? { 'grpc.ssl_target_name_override': 'ip-address.invalid' } : {}),
      'grpc.primary_user_agent': USER_AGENT,
      'grpc.enable_retries': 0,
      ...(options.compression === 'gzip' ? { 'grpc.default_compression_algorithm': 2 } : {}),
    },
  );
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    metadata.set(key.toLowerCase(), value);
  }
  return { client, metadata };
}
