import type { Counter, Histogram, Meter, MeterProvider } from '@opentelemetry/api';

/**
 * The tracer's meter provider for a sidecar that follows a file with a checkpoint: its
 * histograms and counters record nothing while `replaying()` says the line being read was read
 * (and measured) by the run before a restart. A restart reads again from the checkpoint, which
 * stays at the start of the oldest call not exported whole, so that call is exported whole; the
 * calls around it that ended before the restart are exported again as identical spans, and
 * without this they would be measured a second time. Up-down counters (calls in flight) record
 * as ever: a call read again is open in this process, and ends in it.
 */
export function replayAwareMeterProvider(
  provider: MeterProvider,
  replaying: () => boolean,
): MeterProvider {
  return {
    getMeter: (name, version, options) => {
      const meter = provider.getMeter(name, version, options);
      const skipping: Meter = {
        createHistogram: (...args) => unlessReplaying(meter.createHistogram(...args), replaying),
        createCounter: (...args) => unlessReplaying(meter.createCounter(...args), replaying),
        createGauge: (...args) => meter.createGauge(...args),
        createUpDownCounter: (...args) => meter.createUpDownCounter(...args),
        createObservableGauge: (...args) => meter.createObservableGauge(...args),
        createObservableCounter: (...args) => meter.createObservableCounter(...args),
        createObservableUpDownCounter: (...args) => meter.createObservableUpDownCounter(...args),
        addBatchObservableCallback: (...args) => meter.addBatchObservableCallback(...args),
        removeBatchObservableCallback: (...args) => meter.removeBatchObservableCallback(...args),
      };
      return skipping;
    },
  };
}

function unlessReplaying<T extends Histogram | Counter>(
  instrument: T,
  replaying: () => boolean,
): T {
  if ('record' in instrument) {
    return {
      record: (...args: Parameters<Histogram['record']>) => {
        if (!replaying()) instrument.record(...args);
      },
    } as T;
  }
  return {
    add: (...args: Parameters<Counter['add']>) => {
      if (!replaying()) instrument.add(...args);
    },
  } as T;
}
