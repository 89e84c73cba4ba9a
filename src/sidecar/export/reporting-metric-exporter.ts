import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type {
  AggregationOption,
  AggregationTemporality,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';

/** What the three OTLP metric exporters have: the reader asks them for temporality and aggregation. */
type OtlpMetricExporter = Required<PushMetricExporter>;

/**
 * An OTLP metric exporter that says on the sidecar's log when exports start failing (once, with
 * the endpoint's error) and when they work again, as span export does: the SDK's reader
 * otherwise drops a failed export without a word, and a sidecar whose collector is down would
 * only show it by waiting out its shutdown timeout. The final export, at shutdown, is not
 * reported here: the caller reads {@link ReportingMetricExporter.failure} and says it once.
 */
export class ReportingMetricExporter implements PushMetricExporter {
  readonly #inner: OtlpMetricExporter;
  readonly #url: string;
  readonly #log: (line: string) => void;
  #failure: string | undefined;
  #closing = false;

  constructor(inner: OtlpMetricExporter, url: string, log: (line: string) => void) {
    this.#inner = inner;
    this.#url = url;
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

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.#inner.export(metrics, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.#failure !== undefined && !this.#closing) {
          this.#log(`tooltrace sidecar: metrics export to ${this.#url} works again`);
        }
        this.#failure = undefined;
      } else {
        const reason = result.error?.message || 'the export failed';
        if (this.#failure === undefined && !this.#closing) {
          this.#log(
            `tooltrace sidecar: metrics export to ${this.#url} failed (${reason}); trying again at the next interval`,
          );
        }
        this.#failure = reason;
      }
      resultCallback(result);
    });
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  selectAggregationTemporality(instrumentType: InstrumentType): AggregationTemporality {
    return this.#inner.selectAggregationTemporality(instrumentType);
  }

  selectAggregation(instrumentType: InstrumentType): AggregationOption {
    return this.#inner.selectAggregation(instrumentType);
  }
}
