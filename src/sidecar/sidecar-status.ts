import type { SidecarMetrics } from './pipeline/index.js';

/** What a status line reads besides the metrics. */
export interface StatusSources {
  metrics: SidecarMetrics;
  openSpans: () => number;
  pendingSpans: () => number;
}

/** One status line: events received and rejected (by reason), calls open, spans exported and waiting. */
export function formatStatus(sources: StatusSources): string {
  const snapshot = sources.metrics.snapshot();
  const rejected = Object.values(snapshot.rejected).reduce((sum, count) => sum + count, 0);
  const reasons = Object.entries(snapshot.rejected)
    .map(([reason, count]) => `${reason}=${count}`)
    .join(' ');
  return (
    `tooltrace sidecar: ${snapshot.received} events, ${rejected} rejected${reasons === '' ? '' : ` (${reasons})`}, ` +
    `${sources.openSpans()} calls open, ${snapshot.spansExported} spans exported, ${sources.pendingSpans()} waiting`
  );
}

/**
 * Logs the status line every `intervalMs` when it changed (`0`: never); returns the function
 * that stops it. The timer is unref'ed: it never keeps the process alive.
 */
export function startStatusLine(
  intervalMs: number,
  sources: StatusSources,
  log: (line: string) => void,
): () => void {
  if (intervalMs <= 0) return () => {};
  let last = '';
  const timer = setInterval(() => {
    const line = formatStatus(sources);
    if (line !== last) log(line);
    last = line;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
