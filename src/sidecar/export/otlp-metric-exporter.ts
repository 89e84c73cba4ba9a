import {
  OTLPExporterBase,
  createOtlpNetworkExportDelegate,
  ExporterMetrics,
} from '@opentelemetry/otlp-exporter-base';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import {
  JsonMetricsSerializer,
  MetricsExporterMetricsHelper,
  ProtobufMetricsSerializer,
} from '@opentelemetry/otlp-transformer';
import {
  AggregationTemporality,
  AggregationType,
  InstrumentType,
  type AggregationOption,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { BatchTransport } from './export-outcome.js';
import type { TemporalityPreference } from './metrics-temporality.js';

/** What the metrics export sends requests with: a span exporter's one `send`. */
export type MetricSender = Pick<BatchTransport<Uint8Array>, 'send' | 'shutdown'>;

/**
 * The sidecar's OTLP metric exporter: the stock export delegate and serializers (protobuf or
 * OTLP/JSON) sending through the span export's own OTLP/HTTP or OTLP/gRPC exporter (its `send`
 * posts any OTLP body), so that metrics go out with the same `User-Agent`, the same reading of
 * the endpoint's answer and the same words for a failure as spans, with the
 * temporality `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` asks for and default
 * aggregations. (The stock metric exporter package pins copies of its own of the metrics SDK;
 * its base class is these few lines.) A failed export is not retried here: the reader collects
 * again at its next interval, and the final one at shutdown must not outlive the shutdown timeout.
 * It says on the sidecar's log when exports start failing (once, with the endpoint's error) and
 * when they work again, as span export does: the SDK's reader otherwise drops a failed export
 * without a word. The final export is not reported here: the caller reads {@link failure} and
 * says it once.
 */
export class OtlpMetricExporter
  extends OTLPExporterBase<ResourceMetrics>
  implements Required<PushMetricExporter>
{
  readonly #temporality: TemporalityPreference;
  readonly #url: string;
  readonly #log: (line: string) => void;
  #failure: string | undefined;
  #closing = false;

  constructor(
    sender: MetricSender,
    format: 'json' | 'protobuf',
    config: { timeoutMs: number; temporality: TemporalityPreference; url: string },
    log: (line: string) => void,
  ) {
    const { timeoutMs } = config;
    super(
      createOtlpNetworkExportDelegate(
        { timeoutMillis: timeoutMs, concurrencyLimit: 30, compression: 'none' },
        format === 'json' ? JsonMetricsSerializer : ProtobufMetricsSerializer,
        new ExporterMetrics({
          componentType: 'otlp_metric_exporter',
          metricsHelper: MetricsExporterMetricsHelper,
          url: undefined,
          meterProvider: undefined,
          responseAttributesFromError: () => ({}),
        }),
        transportOf(sender),
      ),
    );
    this.#temporality = config.temporality;
    this.#url = config.url;
    this.#log = log;
  }

  /** Why the latest export did not deliver, or `undefined` when it did. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** The next export is the final one: there is no next interval to promise. */
  closing(): void {
    this.#closing = true;
  }

  override export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    super.export(metrics, (result) => {
      const failure =
        result.code === ExportResultCode.SUCCESS
          ? undefined
          : result.error?.message || 'the export failed';
      if (!this.#closing && (failure === undefined) !== (this.#failure === undefined)) {
        this.#log(
          failure === undefined
            ? `tooltrace sidecar: metrics export to ${this.#url} works again`
            : `tooltrace sidecar: metrics export to ${this.#url} failed (${failure}); trying again at the next interval`,
        );
      }
      this.#failure = failure;
      resultCallback(result);
    });
  }

  selectAggregationTemporality(instrument: InstrumentType): AggregationTemporality {
    return temporalityFor(this.#temporality, instrument);
  }

  selectAggregation(): AggregationOption {
    return { type: AggregationType.DEFAULT };
  }
}

/** The stock delegate's transport face over a span exporter's `send` and its tagged outcome. */
function transportOf(sender: MetricSender): IExporterTransport {
  return {
    async send(data): Promise<ExportResponse> {
      const outcome = await sender.send(data);
      if (outcome.kind === 'success') return { status: 'success' };
      const error = new Error(outcome.reason);
      if (outcome.kind === 'permanent') return { status: 'failure', error };
      const wait = outcome.retryAfterMs;
      return { status: 'retryable', error, ...(wait === undefined ? {} : { retryInMillis: wait }) };
    },
    shutdown() {
      void sender.shutdown();
    },
  };
}

/**
 * The temporality an instrument is exported with under `preference`, as the specification
 * defines it: `delta` for counters and histograms (up-down counters stay cumulative), and
 * `lowmemory` delta for synchronous counters and histograms only.
 */
function temporalityFor(
  preference: TemporalityPreference,
  instrument: InstrumentType,
): AggregationTemporality {
  if (preference === 'cumulative') return AggregationTemporality.CUMULATIVE;
  switch (instrument) {
    case InstrumentType.COUNTER:
    case InstrumentType.HISTOGRAM:
      return AggregationTemporality.DELTA;
    case InstrumentType.OBSERVABLE_COUNTER:
      return preference === 'delta'
        ? AggregationTemporality.DELTA
        : AggregationTemporality.CUMULATIVE;
    default:
      return AggregationTemporality.CUMULATIVE;
  }
}
