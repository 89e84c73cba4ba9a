import type * as GrpcModule from '../vendor/grpc.js';
import type { Metadata, sendUnaryData, ServerUnaryCall, ServiceError } from '../vendor/grpc.js';
import {
  decodeTraceRequest,
  encodePartialSuccess,
  encodeRetryStatus,
  OtlpDecodeError,
  type ReceivedSpan,
} from '../otlp/read.js';
import { CountWaiters, type WaitFailure } from './count-waiters.js';
import { ReceiverWaitError } from './receiver-wait-error.js';

const TRACE_SERVICE = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const METRICS_SERVICE = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';
const DEFAULT_WAIT_MS = 10_000;

/**
 * An answer a test scripts for a coming trace export ({@link OtlpGrpcReceiver.answerNext}): a
 * non-zero gRPC status `code` refuses it (its spans are not kept), optionally with a
 * `google.rpc.RetryInfo` delay; code 0 keeps them and may report a `partial_success`.
 */
export interface GrpcScriptedAnswer {
  /** gRPC status code (14 UNAVAILABLE, 7 PERMISSION_DENIED, …). @default 0 (OK) */
  code?: number;
  /** The status message of a failure. @default 'scripted answer' */
  message?: string;
  /** Sends a `RetryInfo` with this delay in the status details. */
  retryDelayMs?: number;
  /** For code 0: spans to report as rejected, and why. */
  partialSuccess?: { rejectedSpans: number; errorMessage?: string };
  /** Answer only after this many milliseconds. @default 0 */
  delayMs?: number;
}

/** One trace export the gRPC receiver answered. */
export interface ReceivedGrpcRequest {
  /** Request metadata, names in lowercase, values joined with `, `. */
  metadata: Record<string, string>;
  /** The gRPC status code it was answered with. */
  code: number;
  /** Spans it carried; `0` unless it was accepted. */
  itemCount: number;
}

/**
 * A real OTLP/gRPC receiver in the test process (`@grpc/grpc-js` on `127.0.0.1`): the
 * Collector's port 4317, minus the forwarding. It serves `TraceService/Export` (decoded with
 * tooltrace's own protobuf reader) and accepts `MetricsService/Export` without decoding it, and
 * answers as scripted.
 */
export interface OtlpGrpcReceiver {
  /** `http://127.0.0.1:PORT`: the value for `OTEL_EXPORTER_OTLP_ENDPOINT` with `grpc`. */
  readonly url: string;
  /** Spans received so far, in arrival order. */
  readonly spans: readonly ReceivedSpan[];
  /** Every trace export answered so far, refused ones included. */
  readonly requests: readonly ReceivedGrpcRequest[];
  /** Metrics export requests accepted so far. */
  readonly metricsRequests: number;
  /** Resolves once `count` spans arrived; rejects with a `ReceiverWaitError` after `timeoutMs`. */
  waitForSpans(count: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Like {@link OtlpGrpcReceiver.waitForSpans}, for answered trace exports. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedGrpcRequest[]>;
  /** Answers the next trace exports with `answers`, one each, in order. */
  answerNext(...answers: GrpcScriptedAnswer[]): void;
  /** Answers every trace export with `answer` from now on; `undefined` goes back to normal. */
  answerAlways(answer: GrpcScriptedAnswer | undefined): void;
  /** Stops the server at once. Safe to call twice. */
  close(): Promise<void>;
}

/** Starts an {@link OtlpGrpcReceiver} on `127.0.0.1` and a free port. */
export async function startOtlpGrpcReceiver(): Promise<OtlpGrpcReceiver> {
  // Loaded on first use: the HTTP receiver (and the demo) never pay for gRPC.
  const grpc = await import('../vendor/grpc.js');
  const spans: ReceivedSpan[] = [];
  const requests: ReceivedGrpcRequest[] = [];
  const waiters = new CountWaiters();
  const scripted: GrpcScriptedAnswer[] = [];
  let always: GrpcScriptedAnswer | undefined;
  let metricsRequests = 0;
  let url = '';
  let closing: Promise<void> | undefined;
  const server = new grpc.Server();
  const passThrough = {
    requestStream: false,
    responseStream: false,
    requestSerialize: (message: Buffer) => message,
    requestDeserialize: (message: Buffer) => message,
    responseSerialize: (message: Buffer) => message,
    responseDeserialize: (message: Buffer) => message,
  } as const;

  const exportTraces = (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => {
    const answer = scripted.shift() ?? always ?? {};
    const record: ReceivedGrpcRequest = {
      metadata: metadataOf(call.metadata),
      code: answer.code ?? 0,
      itemCount: 0,
    };
    const reply = (): void => {
      if ((answer.code ?? 0) !== 0) {
        done(failure(grpc, answer.code!, answer.message ?? 'scripted answer', answer.retryDelayMs));
      } else {
        try {
          const decoded = decodeTraceRequest(call.request, 'application/x-protobuf');
          spans.push(...decoded);
          record.itemCount = decoded.length;
          const partial = answer.partialSuccess;
          done(
            null,
            partial === undefined
              ? Buffer.alloc(0)
              : encodePartialSuccess(partial.rejectedSpans, partial.errorMessage ?? ''),
          );
        } catch (error) {
          if (!(error instanceof OtlpDecodeError)) throw error;
          record.code = grpc.status.INVALID_ARGUMENT;
          done(failure(grpc, grpc.status.INVALID_ARGUMENT, error.message, undefined));
        }
      }
      requests.push(record);
      waiters.notify();
    };
    if ((answer.delayMs ?? 0) > 0) setTimeout(reply, answer.delayMs);
    else reply();
  };

  server.addService(
    { Export: { path: TRACE_SERVICE, originalName: 'Export', ...passThrough } },
    { Export: exportTraces },
  );
  server.addService(
    { Export: { path: METRICS_SERVICE, originalName: 'Export', ...passThrough } },
    {
      Export: (_call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => {
        metricsRequests += 1;
        done(null, Buffer.alloc(0));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    );
  });
  url = `http://127.0.0.1:${port}`;

  const waitFor = <T>(
    what: string,
    count: number,
    timeoutMs: number,
    items: () => readonly T[],
  ): Promise<T[]> =>
    waiters.wait(items, count, timeoutMs, (reason: WaitFailure) => {
      const when = reason === 'timeout' ? `within ${timeoutMs} ms` : 'before it was closed';
      return new ReceiverWaitError(
        `expected ${count} ${what} at the gRPC receiver ${url} ${when}, ${items().length} arrived`,
        { reason, what, expected: count, received: items().length },
      );
    });

  return {
    url,
    spans,
    requests,
    get metricsRequests() {
      return metricsRequests;
    },
    waitForSpans: (count, timeoutMs = DEFAULT_WAIT_MS) =>
      waitFor('spans', count, timeoutMs, () => spans),
    waitForRequests: (count, timeoutMs = DEFAULT_WAIT_MS) =>
      waitFor('requests', count, timeoutMs, () => requests),
    answerNext: (...answers) => void scripted.push(...answers),
    answerAlways: (answer) => void (always = answer),
    close() {
      closing ??= new Promise<void>((resolve) => {
        waiters.failAll('closed');
        server.forceShutdown();
        resolve();
      });
      return closing;
    },
  };
}

function metadataOf(metadata: Metadata): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, values] of Object.entries(metadata.getMap())) {
    result[name.toLowerCase()] = Array.isArray(values) ? values.join(', ') : String(values);
  }
  return result;
}

/** A gRPC error with a `google.rpc.Status` detail carrying `RetryInfo`, when a delay is given. */
function failure(
  grpc: typeof GrpcModule,
  code: number,
  details: string,
  retryDelayMs: number | undefined,
): Partial<ServiceError> {
  const metadata = new grpc.Metadata();
  if (retryDelayMs !== undefined) {
    metadata.set('grpc-status-details-bin', encodeRetryStatus(code, details, retryDelayMs));
  }
  return { code, details, metadata };
}
