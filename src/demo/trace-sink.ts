import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { DerivedIdGenerator } from '../otel/index.js';
import { createTraceExporter, resolveExportConfig } from '../sidecar/index.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../testing/index.js';

/** Where the demo and `tooltrace view` send spans, and where they read them back from. */
export interface TraceSink {
  readonly provider: BasicTracerProvider;
  /** Give it to `traceToolCalls` too: calls under one causal root then share one trace. */
  readonly idGenerator: DerivedIdGenerator;
  /** Where spans go besides the embedded receiver, for the banner. */
  readonly external: string | undefined;
  /** Flushes the SDK and waits until `count` spans reached the embedded receiver. */
  collect(count: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/**
 * The real SDK and OTLP exporter, pointed at the in-process receiver from `tooltrace/testing`
 * (the embedded default: no collector needed), so what is drawn is what was really exported.
 * With `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces variant) set, spans go there as well.
 */
export async function startTraceSink(
  env: NodeJS.ProcessEnv,
  serviceName: string,
): Promise<TraceSink> {
  const receiver: OtlpReceiver = await startOtlpReceiver();
  const processors: SpanProcessor[] = [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }), {
      scheduledDelayMillis: 50,
    }),
  ];
  let external: string | undefined;
  if ((env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '') !== '') {
    const config = resolveExportConfig({}, env);
    external = config.tracesUrl;
    processors.push(new BatchSpanProcessor(createTraceExporter(config)));
  }
  const idGenerator = new DerivedIdGenerator();
  const provider = new BasicTracerProvider({
    idGenerator,
    resource: defaultResource().merge(
      resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName }),
    ),
    spanProcessors: processors,
  });
  return {
    provider,
    idGenerator,
    external,
    async collect(count) {
      await provider.forceFlush();
      return receiver.waitForSpans(count, 15_000);
    },
    async close() {
      await provider.shutdown();
      await receiver.close();
    },
  };
}
