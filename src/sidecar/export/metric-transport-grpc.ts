import { status as GrpcStatus } from '@grpc/grpc-js';
import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import type { MetricTransportOptions } from './metric-transport-http.js';
import { otlpGrpcClient, RETRYABLE_GRPC_CODES } from './otlp-grpc-client.js';

/** The OTLP metrics service's one method. */
const EXPORT_METHOD = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';
/**
 * The metrics export's OTLP/gRPC transport: `MetricsService/Export` over `@grpc/grpc-js` with
 * pass-through serializers and the same primary user agent as span export (grpc-js adds its own
 * `grpc-node-js/…` after it, on every gRPC request), where the stock transport puts its own
 * exporter's name between the two.
 */
export function grpcMetricTransport(options: MetricTransportOptions): IExporterTransport {
  const url = new URL(options.url);
  const { client, metadata } = otlpGrpcClient(options);
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
              RETRYABLE_GRPC_CODES.has(error.code)
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
