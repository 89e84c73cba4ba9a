import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type {
  DataPoint,
  Histogram,
  MetricData,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { Escape } from './format-span.js';

/** `DataPointType.HISTOGRAM` and `EXPONENTIAL_HISTOGRAM` (the SDK is loaded only when used). */
const HISTOGRAMS: ReadonlySet<number> = new Set([0, 1]);

/**
 * The `console` exporter of `OTEL_METRICS_EXPORTER`: each collection as readable lines on a
 * stream (standard output): a heading, then per metric its name, unit and each data point's
 * attributes with its value (a histogram's count, sum, min and max). Names and attribute values
 * go through `escape`. Cumulative, as OTLP's default.
 */
export class ConsoleMetricExporter implements PushMetricExporter {
  readonly #stream: NodeJS.WritableStream;
  readonly #escape: Escape;

  /** `escape` makes input safe on a terminal (the sidecar's `printable`). */
  constructor(stream: NodeJS.WritableStream, escape: Escape) {
    this.#stream = stream;
    this.#escape = escape;
    stream.on('error', () => {});
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    const lines: string[] = [];
    for (const scope of metrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.dataPoints.length === 0) continue;
        lines.push(...metricLines(metric, this.#escape));
      }
    }
    if (lines.length === 0) {
      resultCallback({ code: ExportResultCode.SUCCESS });
      return;
    }
    const text = `metrics at ${new Date().toISOString()}\n${lines.join('\n')}\n\n`;
    try {
      this.#stream.write(text, (error?: Error | null) =>
        resultCallback(
          error === undefined || error === null
            ? { code: ExportResultCode.SUCCESS }
            : { code: ExportResultCode.FAILED, error },
        ),
      );
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function metricLines(metric: MetricData, printable: Escape): string[] {
  const { name, unit } = metric.descriptor;
  const lines = [`  ${printable(name)}${unit === '' ? '' : ` (${printable(unit)})`}`];
  for (const point of metric.dataPoints as DataPoint<unknown>[]) {
    const attributes = Object.entries(point.attributes)
      .map(
        ([key, value]) =>
          `${printable(key)}=${printable(typeof value === 'string' ? value : JSON.stringify(value), 200)}`,
      )
      .join(' ');
    lines.push(
      `    ${attributes === '' ? '(no attributes)' : attributes}  ${valueText(metric, point.value)}`,
    );
  }
  return lines;
}

function valueText(metric: MetricData, value: unknown): string {
  if (HISTOGRAMS.has(metric.dataPointType)) {
    const histogram = value as Pick<Histogram, 'count' | 'sum' | 'min' | 'max'>;
    const parts = [`count=${histogram.count}`];
    if (histogram.sum !== undefined) parts.push(`sum=${round(histogram.sum)}`);
    if (histogram.min !== undefined) parts.push(`min=${round(histogram.min)}`);
    if (histogram.max !== undefined) parts.push(`max=${round(histogram.max)}`);
    return parts.join(' ');
  }
  return typeof value === 'number' ? String(round(value)) : String(value);
}

function round(value: number): number {
  return Number.isInteger(value) ? value : Number(value.toPrecision(6));
}
