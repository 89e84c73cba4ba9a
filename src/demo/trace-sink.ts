import type { TracerProvider } from '@opentelemetry/api';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DerivedIdGenerator } from '../otel/index.js';
import {
  createTraceExporter,
  ReliableSpanProcessor,
  resolveExportConfig,
} from '../sidecar/export/index.js';
import { detectResourceFromEnv } from '../sidecar/pipeline/index.js';
import { TooltraceError } from '../errors/index.js';
import type { ReceivedSpan } from '../otlp/index.js';
import { LoopbackTransport } from './loopback-transport.js';

/** Options for {@link startTraceSink}. */
export interface TraceSinkOptions {
  /** Where `OTEL_*` variables are read from. */
  env: NodeJS.ProcessEnv;
  /** `service.name` unless `OTEL_SERVICE_NAME` says otherwise. */
  serviceName: string;
  /**
   * Also export to `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces variant) when it is set: off
   * when `OTEL_TRACES_EXPORTER` does not name `otlp`.
   */
  exportElsewhere: boolean;
  /** More processors for the provider (the demo's `--out` file, `console`), shut down with it. */
  processors?: readonly SpanProcessor[];
}

/** How the export beyond the embedded receiver went, from {@link TraceSink.close}. */
export type ExternalExportOutcome =
  | { status: 'none' }
  | { status: 'success'; url: string; exported: number }
  | { status: 'failure'; url: string; exported: number; failed: number; message: string };

/** Where the demo sends its spans, and where it reads them back from to draw them. */
export interface TraceSink {
  /**
   * The provider to give `traceReplay`. It only hands out tracers: the subscriber's
   * `shutdown()` would flush every processor and so wait for a slow or dead external endpoint
   * before anything is drawn; {@link TraceSink.collect} flushes instead.
   */
  readonly tracerProvider: TracerProvider;
  /** Give it to `traceReplay` too: calls under one causal root then share one trace. */
  readonly idGenerator: DerivedIdGenerator;
  /** Where spans go besides the embedded receiver, for the banner. */
  readonly external: string | undefined;
  /**
   * Flushes the embedded export (15 s at most) and returns what the receiver decoded; rejects
   * when fewer than `count` spans arrived.
   */
  collect(count: number): Promise<ReceivedSpan[]>;
  /**
   * Flushes the export elsewhere (which may take up to its OTLP timeout when nothing answers),
   * shuts everything down and says how that export went. Never rejects.
   */
  close(): Promise<ExternalExportOutcome>;
}

/**
 * The real SDK and the sidecar's span processor and OTLP protobuf encoder, exporting to an
 * embedded receiver that decodes each request in this process ({@link LoopbackTransport}: no
 * collector needed), so what is drawn is what was really exported.
 * With `exportElsewhere` and `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces variant) set, spans go
 * there as well; that export failing never stops the drawing — {@link TraceSink.close} reports it.
 */
export async function startTraceSink(options: TraceSinkOptions): Promise<TraceSink> {
  const { env } = options;
  // Resolved before anything listens: a bad OTEL_* setting throws with nothing left open.
  const externalConfig =
    options.exportElsewhere &&
    (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '') !== ''
      ? resolveExportConfig({}, env)
      : undefined;
  const resource = await detectResourceFromEnv(env, options.serviceName);
  const receiver = new LoopbackTransport();
  // The sidecar's processor, not the stock batch one, which drops what ends past its queue of
  // 2,048 spans before it can export.
  const embedded = new ReliableSpanProcessor(receiver);
  const processors: SpanProcessor[] = [embedded, ...(options.processors ?? [])];
  // The same processor elsewhere: it retries within the OTLP timeout, then says what it lost.
  const elsewhere = { ended: 0, lastError: undefined as string | undefined };
  let externalProcessor: ReliableSpanProcessor | undefined;
  if (externalConfig !== undefined) {
    externalProcessor = new ReliableSpanProcessor(await createTraceExporter(externalConfig), {
      onEnd: () => void (elsewhere.ended += 1),
      onFailed: (reason) => void (elsewhere.lastError = reason),
      onDropped: (_batch, _status, reason) => void (elsewhere.lastError = reason),
    });
    processors.push(externalProcessor);
  }
  const idGenerator = new DerivedIdGenerator();
  const provider = new BasicTracerProvider({
    idGenerator,
    resource,
    spanProcessors: processors,
  });
  let closing: Promise<ExternalExportOutcome> | undefined;
  return {
    tracerProvider: { getTracer: (...tracer) => provider.getTracer(...tracer) },
    idGenerator,
    external: externalConfig?.tracesUrl,
    async collect(count) {
      // Only the embedded processor: a slow or dead external endpoint must not hold the drawing.
      // The sidecar's processor retries for good: the drawing waits for it 15 s at most.
      await within(embedded.forceFlush(), 15_000);
      const spans = receiver.spans;
      if (spans.length < count) {
        throw new TooltraceError(
          `only ${spans.length} of ${count} spans reached the embedded receiver within 15 s`,
        );
      }
      return [...spans];
    },
    close() {
      closing ??= (async (): Promise<ExternalExportOutcome> => {
        // The processor's deadline timer does not keep the process alive; this wait does.
        if (externalProcessor !== undefined && externalConfig !== undefined) {
          const { timeoutMs } = externalConfig;
          await within(externalProcessor.shutdown(timeoutMs), timeoutMs + 1000);
        }
        await provider.shutdown().catch(() => undefined);
        if (externalConfig === undefined || externalProcessor === undefined) {
          return { status: 'none' };
        }
        const { exported } = externalProcessor.stats();
        const failed = elsewhere.ended - exported;
        const lastError = elsewhere.lastError;
        return failed === 0
          ? { status: 'success', url: externalConfig.tracesUrl, exported }
          : {
              status: 'failure',
              url: externalConfig.tracesUrl,
              exported,
              failed,
              message: lastError ?? 'unknown error',
            };
      })();
      return closing;
    },
  };
}

/** Waits for `work`, or `timeoutMs` when it takes longer, keeping the process alive meanwhile. */
async function within(work: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work,
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]);
  clearTimeout(timer);
}
