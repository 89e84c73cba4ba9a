import { ConfigurationError } from '../errors/index.js';
import { runView, type ViewFilter } from '../view/index.js';
import { type CliStreams, useColor } from './cli-streams.js';
import { parseFlags, traceByFlag } from './parse-flags.js';
import { keepHeapTight } from './tight-heap.js';
import { VIEW_USAGE } from './usage.js';

/** `tooltrace view FILE [options]`. */
export async function viewCommand(argv: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseFlags('view', VIEW_USAGE, {
    args: [...argv],
    allowPositionals: true,
    options: {
      'no-color': { type: 'boolean' },
      'trace-by': { type: 'string' },
      all: { type: 'boolean' },
      trace: { type: 'string' },
      session: { type: 'string' },
      tool: { type: 'string' },
      errors: { type: 'boolean' },
      slowest: { type: 'string' },
      html: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length !== 1) {
    throw new ConfigurationError(
      `give exactly one FILE (got ${positionals.length}): tooltrace view FILE`,
      { setting: 'view' },
    );
  }
  const traceBy = traceByFlag(values['trace-by']);
  const filter: ViewFilter = {};
  if (values.trace !== undefined) {
    if (!/^[0-9a-f]{32}$/i.test(values.trace) || /^0+$/.test(values.trace)) {
      refuse('--trace', 'a trace id of 32 hex digits, not all zero', values.trace);
    }
    filter.traceId = values.trace.toLowerCase();
  }
  if (values.session !== undefined) {
    if (values.session.trim() === '') refuse('--session', 'a session id', values.session);
    filter.sessionId = values.session;
  }
  if (values.tool !== undefined) {
    if (values.tool.trim() === '') refuse('--tool', 'a tool name', values.tool);
    filter.tool = values.tool;
  }
  if (values.errors === true) filter.errors = true;
  if (values.slowest !== undefined) {
    const count = Number(values.slowest);
    if (
      !/^\d+$/.test(values.slowest) ||
      !Number.isSafeInteger(count) ||
      count < 1 ||
      count > 1000
    ) {
      refuse('--slowest', 'a whole number from 1 to 1000', values.slowest);
    }
    filter.slowest = count;
  }
  if (values.html !== undefined && values.html.trim() === '') {
    refuse('--html', 'a file to write', values.html);
  }
  keepHeapTight();
  return runView(positionals[0]!, {
    color: useColor(values['no-color'], streams.stdout),
    traceBy,
    filter,
    all: values.all === true,
    ...(values.html === undefined ? {} : { html: values.html }),
    stdout: streams.stdout,
    stderr: streams.stderr,
  });
}

/** A flag's value refused: one line naming the flag, what it takes and what it got. */
function refuse(flag: string, wanted: string, got: string): never {
  throw new ConfigurationError(`${flag} takes ${wanted}, got '${got}'`, { setting: flag });
}
