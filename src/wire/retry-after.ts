/**
 * `Retry-After` (what a sidecar answers the forwarder, and an OTLP endpoint the exporter) in
 * milliseconds from `now`: delay-seconds or an HTTP date, `undefined` when
 * absent or unreadable. A date in the past means "now" (0).
 */
export function parseRetryAfter(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with the day's name; anything else is no date.
  if (!/^[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
