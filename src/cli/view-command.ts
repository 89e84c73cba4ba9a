import { ConfigurationError } from '../errors/index.js';
import type { TraceBy } from '../otel/index.js';
import { runView } from '../demo/run-view.js';
import { type CliStreams, useColor } from './cli-streams.js';
import { parseFlags } from './parse-flags.js';
import { VIEW_USAGE } from './usage.js';

/** The groupings `--trace-by` takes, as the sidecar's. */
const TRACE_BY: readonly TraceBy[] = ['causal-root', 'session', 'call'];

/** `tooltrace view FILE [options]`. */
export async function viewCommand(argv: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseFlags('view', VIEW_USAGE, {
    args: [...argv],
    allowPositionals: true,
    options: {
      'no-color': { type: 'boolean' },
      'trace-by': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length !== 1) {
    throw new ConfigurationError(
      `give exactly one FILE (got ${positionals.length}): tooltrace view FILE`,
      { setting: 'view' },
    );
  }
  const traceBy = values['trace-by'];
  if (traceBy !== undefined && !TRACE_BY.includes(traceBy as TraceBy)) {
    throw new ConfigurationError(`--trace-by must be ${TRACE_BY.join(', ')}, got '${traceBy}'`, {
      setting: '--trace-by',
    });
  }
  return runView(positionals[0]!, {
    color: useColor(values['no-color'], streams.stdout),
    ...(traceBy === undefined ? {} : { traceBy: traceBy as TraceBy }),
    stdout: streams.stdout,
    stderr: streams.stderr,
  });
}
