import type { ReliableSpanProcessorStats } from './export/index.js';

/**
 * The exit codes of `tooltrace sidecar`, and what `Sidecar.done` resolves with. A sidecar
 * never exits 0 having lost spans: the code says how they were lost, and standard error says
 * how many.
 */
export const SIDECAR_EXIT_CODE = {
  /** Everything was delivered. */
  ok: 0,
  /** A bad flag or setting; nothing was started (set by the CLI). */
  configuration: 2,
  /**
   * The endpoint refused spans for good: a status OTLP says not to retry (404, 401, 400, …), or
   * a `partial_success` naming rejected spans.
   */
  refused: 3,
  /**
   * The shutdown deadline (`--shutdown-timeout`) passed with spans not yet delivered (the
   * endpoint was down or slow). Wins over {@link SIDECAR_EXIT_CODE.refused}.
   */
  undelivered: 4,
} as const;

/**
 * The exit code for a sidecar that stopped with `undelivered` spans left at the deadline and
 * the processor's final `stats`; whatever was lost is logged as numbers first.
 */
export function exitCodeFor(
  stats: ReliableSpanProcessorStats,
  undelivered: number,
  log: (line: string) => void,
): number {
  const { dropped, droppedByStatus, rejected } = stats;
  let code: number = SIDECAR_EXIT_CODE.ok;
  if (dropped + rejected > 0) {
    const statuses = Object.entries(droppedByStatus)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    log(
      `tooltrace sidecar: ${dropped + rejected} spans refused by the endpoint` +
        ` (${dropped} dropped${statuses === '' ? '' : ` [${statuses}]`}, ${rejected} rejected)`,
    );
    code = SIDECAR_EXIT_CODE.refused;
  }
  if (undelivered > 0) code = SIDECAR_EXIT_CODE.undelivered;
  if (code !== SIDECAR_EXIT_CODE.ok) {
    log(
      `tooltrace sidecar: ${undelivered + dropped + rejected} spans were not delivered; exit code ${code}`,
    );
  }
  return code;
}
