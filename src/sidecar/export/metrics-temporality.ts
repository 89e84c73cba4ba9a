import { ConfigurationError } from '../../errors/index.js';

/**
 * `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`'s values (the OTLP exporter specification).
 * Read at start-up without loading the metrics SDK; the exporter maps it to instruments.
 */
export type TemporalityPreference = 'cumulative' | 'delta' | 'lowmemory';

/**
 * Reads `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (any case; `cumulative` when unset).
 * Another value is refused with a {@link ConfigurationError} naming the variable, rather than
 * quietly exported as cumulative to a backend that asked for delta.
 */
export function readTemporalityPreference(env: NodeJS.ProcessEnv): TemporalityPreference {
  const name = 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE';
  const value = env[name]?.trim().toLowerCase() || 'cumulative';
  if (value === 'cumulative' || value === 'delta' || value === 'lowmemory') return value;
  throw new ConfigurationError(
    `${name} '${env[name]}' is not supported: use cumulative, delta or lowmemory`,
    { setting: name },
  );
}
