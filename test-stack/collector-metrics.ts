/**
 * The value of one counter (summed over its series) in a Collector's own metrics (its
 * `metricsUrl`, Prometheus text), named without the `_total` suffix: the Collector's exporter
 * leaves type suffixes out, other exporters add them.
 */
export async function collectorCounter(metricsUrl: string, name: string): Promise<number> {
  const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([0-9.e+-]+)/.exec(line);
    if (match !== null && (match[1] === name || match[1] === `${name}_total`)) {
      sum += Number(match[3]);
    }
  }
  return sum;
}
