import type { BackendReport } from './check-backend.js';
import type { TraceExpectation } from './trace-expectation.js';

const OUTCOMES = { ok: 'OK', error: 'ERROR', cancelled: 'CANCELLED', unset: 'UNSET' } as const;

/** A backend's report as lines for a terminal or a CI log: what was found, then what is missing. */
export function formatReport(report: BackendReport, expectation: TraceExpectation): string {
  const tries = `${report.attempts} ${report.attempts === 1 ? 'try' : 'tries'}`;
  const head = `${report.backend} (${report.url}), after ${tries}:`;
  const result = report.result;
  if (result.kind === 'unreachable')
    return `${head}\n  FAIL could not query it: ${result.reason}\n`;
  if (result.kind === 'no-trace')
    return `${head}\n  FAIL no trace of ${expectation.description} found\n`;
  const trace = result.trace;
  const lines = [
    head,
    `  trace ${trace.traceId}: ${trace.spanCount} spans, ${trace.calls.length} execute_tool calls` +
      (result.traceCount > 1 ? ` (the best of ${result.traceCount} traces)` : ''),
  ];
  for (const call of trace.calls) {
    const columns = [
      call.tool.padEnd(16),
      OUTCOMES[call.outcome].padEnd(9),
      call.callers.length === 0 ? '' : `under ${call.callers.join(' < ')}`,
      call.message === '' ? '' : JSON.stringify(call.message),
    ];
    lines.push(`    ${columns.filter((column) => column !== '').join(' ')}`.trimEnd());
  }
  if (trace.problems.length === 0)
    lines.push(`  OK ${expectation.description} has the expected shape`);
  for (const problem of trace.problems) lines.push(`  FAIL ${problem}`);
  return `${lines.join('\n')}\n`;
}
