import type { EmittedInstrument } from './emitted-metrics.js';

/**
 * The Prometheus OTLP translation strategy {@link prometheusSeries} implements, as written in
 * `otlp.translation_strategy` of a Prometheus configuration (also Prometheus 3's default).
 */
export const TRANSLATION_STRATEGY = 'UnderscoreEscapingWithSuffixes';

/** One series name Prometheus stores for an instrument, with the labels its points may carry. */
export interface PrometheusSeries {
  /** `gen_ai_execute_tool_duration_seconds_bucket` */
  name: string;
  /** The instrument's OpenTelemetry name, for messages. */
  instrument: string;
  /** Translated attribute keys, plus `le` on a histogram's `_bucket` series. */
  labels: string[];
}

/**
 * UCUM units to the suffix Prometheus appends, for the units tooltrace uses (and their
 * neighbours). A unit outside this table fails the test rather than being guessed; add it from
 * the translator's unit table (prometheus/otlptranslator) when an instrument starts using it.
 */
const UNIT_SUFFIXES: Readonly<Record<string, string>> = {
  s: 'seconds',
  ms: 'milliseconds',
  us: 'microseconds',
  ns: 'nanoseconds',
  By: 'bytes',
  '1': '',
};

/**
 * An attribute key as a Prometheus label under {@link TRANSLATION_STRATEGY}: every character
 * other than a letter, digit or `_` becomes `_`; a leading digit gets `key_`, a single leading
 * `_` gets `key` (`gen_ai.tool.name` → `gen_ai_tool_name`).
 */
export function prometheusLabel(attribute: string): string {
  const label = attribute.replace(/[^A-Za-z0-9_]/g, '_');
  if (/^\d/.test(label)) return `key_${label}`;
  if (/^_[^_]/.test(label)) return `key${label}`;
  return label;
}

/**
 * The metric name Prometheus gives an instrument under {@link TRANSLATION_STRATEGY}: the name
 * split at every character other than a letter, digit or `:` and joined with `_` (so dots become
 * underscores and runs of them collapse); the unit's suffix appended unless the name has that
 * word already (`s` → `seconds`; annotations like `{token}` give none); `total` moved to the
 * end of a monotonic counter; `ratio` for a gauge of unit `1`.
 */
export function prometheusMetricName(instrument: EmittedInstrument): string {
  const tokens = instrument.name.split(/[^A-Za-z0-9:]+/).filter((token) => token !== '');
  const suffix = unitSuffix(instrument);
  if (suffix !== '' && !tokens.includes(suffix)) tokens.push(suffix);
  if (instrument.kind === 'counter') {
    return [...tokens.filter((token) => token !== 'total'), 'total'].join('_');
  }
  if (instrument.kind === 'gauge' && instrument.unit === '1') {
    return [...tokens.filter((token) => token !== 'ratio'), 'ratio'].join('_');
  }
  return tokens.join('_');
}

/**
 * Every series an instrument becomes in Prometheus: `_bucket` (with `le`), `_sum` and `_count`
 * for a histogram, the one name otherwise. `resourceLabels` are the labels every series gets
 * from its resource (`job`, `instance`, promoted resource attributes).
 */
export function prometheusSeries(
  instrument: EmittedInstrument,
  resourceLabels: readonly string[],
): PrometheusSeries[] {
  const name = prometheusMetricName(instrument);
  const labels = [...instrument.attributes.map(prometheusLabel), ...resourceLabels];
  if (instrument.kind !== 'histogram') {
    return [{ name, instrument: instrument.name, labels }];
  }
  return [
    { name: `${name}_bucket`, instrument: instrument.name, labels: [...labels, 'le'] },
    { name: `${name}_sum`, instrument: instrument.name, labels },
    { name: `${name}_count`, instrument: instrument.name, labels },
  ];
}

function unitSuffix(instrument: EmittedInstrument): string {
  const unit = instrument.unit.trim();
  if (unit === '' || /[{}]/.test(unit)) return '';
  const suffix = UNIT_SUFFIXES[unit];
  if (suffix === undefined) {
    throw new Error(
      `${instrument.name}: no Prometheus suffix known for unit ${unit}; add it to UNIT_SUFFIXES`,
    );
  }
  return suffix;
}
