import { Client, credentials, Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import type { MetricTransportOptions } from './metric-transport-http.js';
import { USER_AGENT } from './user-agent.js';

/** The OTLP metrics service's one method. */
const EXPORT_METHOD = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';
/** gRPC codes OTLP/gRPC says to retry (as for spans: see the span exporter). */
const RETRYABLE_CODES = new Set([
  GrpcStatus.CANCELLED,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.ABORTED,
  GrpcStatus.OUT_OF_RANGE,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
]);

/**
 * The metrics export's OTLP/gRPC transport: `MetricsService/Export` over `@grpc/grpc-js` with
 * pass-through serializers and the same primary user agent as span export (grpc-js adds its own
 * `grpc-node-js/…` after it, on every gRPC request), where the stock transport puts its own
 * exporter's name between the two.
 */
export function grpcMetricTransport(options: MetricTransportOptions): IExporterTransport {
  const url = new URL(options.url);
  const tls = url.protocol === 'https:';
  const port = url.port === '' ? (tls ? '443' : '4317') : url.port;
  const client = new Client(
    `${url.hostname}:${port}`,
    tls
      ? credentials.createSsl(
          options.tls?.ca ?? null,
          options.tls?.key ?? null,
          options.tls?.cert ?? null,
        )
      : credentials.createInsecure(),
    { 'grpc.primary_user_agent': USER_AGENT, 'grpc.enable_retries': 0 },
  );
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(options.headers))
    metadata.set(key.toLowerCase(), value);
  return {
    send(data, timeoutMillis) {
      return new Promise<ExportResponse>((resolve) => {
        client.makeUnaryRequest<Buffer, Buffer>(
          EXPORT_METHOD,
          (message) => message,
          (message) => message,
          Buffer.from(data.buffer, data.byteOffset, data.byteLength),
          metadata,
          { deadline: Date.now() + timeoutMillis },
          (error, answer) => {
            if (error === null) {
              resolve({ status: 'success', ...(answer === undefined ? {} : { data: answer }) });
              return;
            }
            const name = GrpcStatus[error.code] ?? String(error.code);
            const failure = new Error(
              `${name} from ${url.href}${error.details === '' ? '' : `: ${error.details}`}`,
            );
            resolve(
              RETRYABLE_CODES.has(error.code)
                ? { status: 'retryable', error: failure }
                : { status: 'failure', error: failure },
            );
          },
        );
      });
    },
    shutdown() {
      client.close();
    },
  };
}
