import { ConfigurationError } from '../errors/index.js';
import { runView } from '../demo/run-view.js';
import { type CliStreams, useColor } from './cli-streams.js';
import { parseFlags } from './parse-flags.js';
import { VIEW_USAGE } from './usage.js';

/** `tooltrace view FILE [options]`. */
export async function viewCommand(argv: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseFlags('view', VIEW_USAGE, {
    args: [...argv],
    allowPositionals: true,
    options: {
      'no-color': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length !== 1) {
    throw new ConfigurationError(
      `give exactly one FILE (got ${positionals.length}): tooltrace view FILE`,
      { setting: 'view' },
    );
  }
  return runView(positionals[0]!, {
    color: useColor(values['no-color'], streams.stdout),
    stdout: streams.stdout,
    stderr: streams.stderr,
  });
}
