import type { TracerProvider } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { DerivedIdGenerator } from '../otel/index.js';
import {
  createTraceExporter,
  parseKeyValueList,
  ReliableSpanProcessor,
  resolveExportConfig,
} from '../sidecar/export/index.js';
import { detectResource } from '../sidecar/pipeline/index.js';
import type { ReceivedSpan } from '../otlp/index.js';
import { startOtlpReceiver } from '../testing/index.js';
import { CountingExporter } from './counting-exporter.js';

/** Options for {@link startTraceSink}. */
export interface TraceSinkOptions {
  /** Where `OTEL_*` variables are read from. */
  env: NodeJS.ProcessEnv;
  /** `service.name` unless `OTEL_SERVICE_NAME` says otherwise. */
  serviceName: string;
  /**
   * Also export to `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces variant) when it is set.
   * `tooltrace view` leaves it off: looking at a file should not send it anywhere.
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

/** Where the demo and `tooltrace view` send spans, and where they read them back from. */
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
  /** Flushes the embedded export and waits until `count` spans reached the receiver. */
  collect(count: number): Promise<ReceivedSpan[]>;
  /**
   * Flushes the export elsewhere (which may take up to its OTLP timeout when nothing answers),
   * shuts everything down and says how that export went. Never rejects.
   */
  close(): Promise<ExternalExportOutcome>;
}

/**
 * The real SDK and OTLP exporter, pointed at the in-process receiver from `tooltrace/testing`
 * (the embedded default: no collector needed), so what is drawn is what was really exported.
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
  const resource = await detectResource({
    ...parseKeyValueList(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES'),
    'service.name': env.OTEL_SERVICE_NAME ?? options.serviceName,
  });
  const receiver = await startOtlpReceiver();
  // The sidecar's processor, not the stock batch one: a journal is replayed in one go, and the
  // stock processor drops what ends past its queue of 2,048 spans before it can export (a
  // 3,000-call journal lost 440 calls and `view` then gave up waiting for them).
  const embedded = new ReliableSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }));
  const processors: SpanProcessor[] = [embedded, ...(options.processors ?? [])];
  let externalExporter: CountingExporter | undefined;
  let externalProcessor: SpanProcessor | undefined;
  if (externalConfig !== undefined) {
    externalExporter = new CountingExporter(await createTraceExporter(externalConfig));
    externalProcessor = new BatchSpanProcessor(externalExporter);
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
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        embedded.forceFlush(),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, 15_000))),
      ]);
      clearTimeout(timer);
      return receiver.waitForSpans(count, 15_000);
    },
    close() {
      closing ??= (async (): Promise<ExternalExportOutcome> => {
        // Failures are counted by the exporter; the rejections only repeat them.
        await externalProcessor?.forceFlush().catch(() => undefined);
        await provider.shutdown().catch(() => undefined);
        await receiver.close();
        if (externalConfig === undefined || externalExporter === undefined) {
          return { status: 'none' };
        }
        const { exported, failed, lastError } = externalExporter.stats();
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
