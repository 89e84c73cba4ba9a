import {
  status as GrpcStatus,
  type Client,
  type ClientUnaryCall,
  type Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  SHUT_DOWN,
  type BatchTransport,
  type ExportOutcome,
  type OtlpEndpointOptions,
} from './export-outcome.js';
import {
  decodePartialSuccess,
  decodeRetryInfoDelay,
  OtlpTraceEncoder,
  type SpanBatch,
} from '../../otlp/index.js';
import { tooltraceNumberTypes } from './tooltrace-number-types.js';
import { otlpGrpcClient, RETRYABLE_GRPC_CODES } from './otlp-grpc-client.js';

/** The OTLP trace service's one method. */
const TRACES_METHOD = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** What a permanent code most likely means, said where the failure is reported. */
const HINTS: Partial<Record<GrpcStatus, string>> = {
  [GrpcStatus.UNAUTHENTICATED]: 'check the credentials (--otlp-header, OTEL_EXPORTER_OTLP_HEADERS)',
  [GrpcStatus.PERMISSION_DENIED]:
    'check the credentials (--otlp-header, OTEL_EXPORTER_OTLP_HEADERS)',
  [GrpcStatus.UNIMPLEMENTED]: 'is this an OTLP/gRPC endpoint (port 4317)?',
};

/** Options for {@link OtlpGrpcSpanExporter}. */
export interface OtlpGrpcSpanExporterOptions extends OtlpEndpointOptions {
  /**
   * The OTLP service method requests go to (the metrics export sends through this exporter too).
   * @default '/opentelemetry.proto.collector.trace.v1.TraceService/Export'
   */
  method?: string;
}

/**
 * OTLP/gRPC span exporter for the sidecar: the same protobuf bytes as OTLP/HTTP (written by
 * {@link OtlpTraceEncoder}) sent as `TraceService/Export` over `@grpc/grpc-js` with pass-through
 * serializers, so there is no second encoder and no `.proto` loading. One attempt per batch; the
 * outcome is classified by gRPC status as the OTLP specification says (`RETRYABLE_GRPC_CODES`;
 * `RESOURCE_EXHAUSTED` only when the server sent a `RetryInfo`, which says recovery is possible),
 * with the server's `RetryInfo` delay; the answer's `partial_success` is read. The stock
 * `@opentelemetry/exporter-trace-otlp-grpc` retries inside `export()` and reports failures
 * without the code, which the {@link ReliableSpanProcessor} needs to decide.
 */
export class OtlpGrpcSpanExporter implements BatchTransport<Buffer> {
  readonly #address: string;
  readonly #client: Client;
  readonly #metadata: Metadata;
  readonly #timeoutMs: number;
  readonly #method: string;
  readonly #encoder = new OtlpTraceEncoder(tooltraceNumberTypes());
  readonly #calls = new Set<ClientUnaryCall>();
  #shutdown = false;

  constructor(options: OtlpGrpcSpanExporterOptions) {
    const url = new URL(options.url);
    this.#address = url.href;
    const { client, metadata } = otlpGrpcClient(options);
    this.#client = client;
    this.#metadata = metadata;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#method = options.method ?? TRACES_METHOD;
  }

  /** A batch that encodes each span as it is added, for {@link send}. */
  openBatch(): SpanBatch<Buffer> {
    return this.#encoder.openBatch();
  }

  /** Sends the body of a closed batch once and tells what came of it; never rejects. */
  send(body: Buffer): Promise<ExportOutcome> {
    if (this.#shutdown) return Promise.resolve(SHUT_DOWN);
    return new Promise((resolve) => {
      const call = this.#client.makeUnaryRequest<Buffer, Buffer>(
        this.#method,
        (message) => message,
        (message) => message,
        body,
        this.#metadata,
        { deadline: Date.now() + this.#timeoutMs },
        (error, answer) => {
          this.#calls.delete(call);
          resolve(error === null ? success(answer) : this.#failure(error));
        },
      );
      this.#calls.add(call);
    });
  }

  /** Gives the memory of `body` back: once answered, grpc-js framed (copied) it long ago. */
  releaseBatch(body: Buffer): void {
    this.#encoder.release(body);
  }

  /** Cancels calls in flight and closes the channel. Safe to call twice. */
  shutdown(): Promise<void> {
    if (this.#shutdown) return Promise.resolve();
    this.#shutdown = true;
    for (const call of this.#calls) call.cancel();
    this.#client.close();
    return Promise.resolve();
  }

  #failure(error: ServiceError): ExportOutcome {
    const name = GrpcStatus[error.code] ?? String(error.code);
    const said = error.details === '' ? '' : `: ${error.details}`;
    const details = error.metadata?.get('grpc-status-details-bin')[0];
    const retryDelayMs = Buffer.isBuffer(details) ? decodeRetryInfoDelay(details) : undefined;
    const retryable =
      RETRYABLE_GRPC_CODES.has(error.code) ||
      (error.code === GrpcStatus.RESOURCE_EXHAUSTED && retryDelayMs !== undefined);
    if (retryable) {
      return {
        kind: 'retryable',
        status: name,
        reason: `${name} from ${this.#address}${said}`,
        retryAfterMs: retryDelayMs,
      };
    }
    const hint = HINTS[error.code];
    return {
      kind: 'permanent',
      status: name,
      reason: `${name} from ${this.#address}${hint === undefined ? '' : ` — ${hint}`}${said}`,
    };
  }
}

function success(answer: Buffer | undefined): ExportOutcome {
  const partial =
    answer === undefined ? undefined : decodePartialSuccess(answer, 'application/x-protobuf');
  return {
    kind: 'success',
    rejectedSpans: partial?.rejectedSpans ?? 0,
    rejectionMessage: partial?.errorMessage ?? '',
  };
}
