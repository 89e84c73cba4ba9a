import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import type { TemporalityPreference } from './metrics-temporality.js';
import {
  AggregationTemporality,
  AggregationType,
  InstrumentType,
  type AggregationOption,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';

/** Turns collected metrics into an OTLP request body ({@link OtlpMetricsEncoder}, or the stock serializers). */
export interface MetricsSerializer {
  serializeRequest(metrics: ResourceMetrics): Uint8Array | undefined;
}

/**
 * The sidecar's OTLP metric exporter: the otlp room's metrics encoder, the temporality
 * `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` asks for and default aggregations (what the
 * stock exporter does), sent once per collection over a
 * transport of the sidecar's own ({@link httpMetricTransport} or `grpcMetricTransport`), so that
 * metrics go out with the same `User-Agent` as spans. A failed export is not retried here: the
 * reader collects again at its next interval, and the final one at shutdown must not outlive the
 * shutdown timeout.
 */
export class OtlpMetricExporter implements Required<PushMetricExporter> {
  readonly #transport: IExporterTransport;
  readonly #serializer: MetricsSerializer;
  readonly #timeoutMs: number;
  readonly #temporality: TemporalityPreference;
  readonly #inFlight = new Set<Promise<void>>();
  #shutdown = false;

  constructor(
    transport: IExporterTransport,
    serializer: MetricsSerializer,
    timeoutMs: number,
    temporality: TemporalityPreference,
  ) {
    this.#transport = transport;
    this.#serializer = serializer;
    this.#timeoutMs = timeoutMs;
    this.#temporality = temporality;
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    if (this.#shutdown) {
      resultCallback({
        code: ExportResultCode.FAILED,
        error: new Error('the exporter is shut down'),
      });
      return;
    }
    const body = this.#serializer.serializeRequest(metrics);
    if (body === undefined) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('metrics not serialized') });
      return;
    }
    const sending = this.#transport.send(body, this.#timeoutMs).then(
      (response) =>
        resultCallback(
          response.status === 'success'
            ? { code: ExportResultCode.SUCCESS }
            : {
                code: ExportResultCode.FAILED,
                error: response.error ?? new Error(`the export failed (${response.status})`),
              },
        ),
      (error: unknown) =>
        resultCallback({
          code: ExportResultCode.FAILED,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
    );
    this.#inFlight.add(sending);
    void sending.finally(() => this.#inFlight.delete(sending));
  }

  /** Resolves once every export in flight was answered. */
  async forceFlush(): Promise<void> {
    await Promise.all(this.#inFlight);
  }

  /** Waits for exports in flight, then closes the transport. Safe to call twice. */
  async shutdown(): Promise<void> {
    if (this.#shutdown) return;
    this.#shutdown = true;
    await this.forceFlush();
    this.#transport.shutdown();
  }

  selectAggregationTemporality(instrument: InstrumentType): AggregationTemporality {
    return temporalityFor(this.#temporality, instrument);
  }

  selectAggregation(): AggregationOption {
    return { type: AggregationType.DEFAULT };
  }
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
