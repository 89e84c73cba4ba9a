import { MetricReader } from '@opentelemetry/sdk-metrics';

/**
 * A metric reader that exports nowhere: whoever holds it calls `collect()` when it wants the
 * instruments' values (the demo's end-screen table, tests, benchmarks). Flush and shutdown have
 * nothing to do.
 */
export class CollectedMetricReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }

  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}
