import { counted } from '../errors/index.js';
import type { ReliableSpanProcessorStats, SpanDestination } from './export/index.js';

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
   * A destination refused spans for good: the endpoint, with a status OTLP says not to retry
   * (404, 401, 400, …) or a `partial_success` naming rejected spans; or standard output
   * (`console`) could not be written, closed by its reader (`| head`).
   */
  refused: 3,
  /**
   * The shutdown deadline (`--shutdown-timeout`) passed with spans not yet delivered (the
   * endpoint was down or slow). Wins over {@link SIDECAR_EXIT_CODE.refused}.
   */
  undelivered: 4,
} as const;

/** What one destination made of the spans, for {@link exitCodeFor}. */
export interface DeliveryReport extends Pick<SpanDestination, 'kind' | 'description' | 'refusal'> {
  readonly stats: ReliableSpanProcessorStats;
  /** Spans not taken by the shutdown deadline. */
  readonly undelivered: number;
}

/**
 * The exit code for a sidecar that stopped with what each destination made of the spans;
 * whatever was lost is logged as numbers first, naming the destination when there are several,
 * and a refusal in the words of what refused: the endpoint, or standard output (a closed pipe,
 * `| head`, is no endpoint).
 */
export function exitCodeFor(
  reports: readonly DeliveryReport[],
  log: (line: string) => void,
): number {
  let code: number = SIDECAR_EXIT_CODE.ok;
  const several = reports.length > 1;
  const lost: string[] = [];
  let lostCount = 0;
  for (const report of reports) {
    const { dropped, droppedByStatus, rejected } = report.stats;
    const to = several ? ` to ${report.description}` : '';
    if (dropped + rejected > 0) {
      const statuses = Object.entries(droppedByStatus)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', ');
      if (report.kind === 'otlp' || report.kind === 'none') {
        log(
          `tooltrace sidecar: ${counted(dropped + rejected, 'span')} refused by the endpoint${to}` +
            ` (${dropped} dropped${statuses === '' ? '' : ` [${statuses}]`}, ${rejected} rejected)`,
        );
      } else {
        const what = report.kind === 'console' ? 'printed' : `written${to}`;
        log(
          `tooltrace sidecar: ${counted(dropped, 'span')} not ${what}: ${report.refusal ?? `dropped [${statuses}]`}`,
        );
      }
      code = SIDECAR_EXIT_CODE.refused;
    }
    const count = report.undelivered + dropped + rejected;
    if (count > 0) lost.push(several ? `${count}${to}` : `${count}`);
    lostCount += count;
  }
  if (reports.some((report) => report.undelivered > 0)) code = SIDECAR_EXIT_CODE.undelivered;
  if (code !== SIDECAR_EXIT_CODE.ok) {
    log(
      several
        ? `tooltrace sidecar: spans were not delivered: ${lost.join(', ')}; exit code ${code}`
        : `tooltrace sidecar: ${lostCount === 1 ? '1 span was' : `${lost[0]} spans were`} not delivered; exit code ${code}`,
    );
  }
  return code;
}
