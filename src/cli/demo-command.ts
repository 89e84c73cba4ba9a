import { runDemo } from '../demo/run-demo.js';
import { type CliStreams, useColor } from './cli-streams.js';
import { parseFlags } from './parse-flags.js';
import { DEMO_USAGE } from './usage.js';

/** `tooltrace demo [options]`. */
export async function demoCommand(argv: readonly string[], streams: CliStreams): Promise<number> {
  const { values } = parseFlags('demo', DEMO_USAGE, {
    args: [...argv],
    allowPositionals: false,
    options: {
      fast: { type: 'boolean' },
      'no-color': { type: 'boolean' },
      out: { type: 'string' },
      forward: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return runDemo({
    fast: values.fast === true,
    color: useColor(values['no-color'], streams.stdout),
    ...(values.out === undefined ? {} : { out: values.out }),
    ...(values.forward === undefined ? {} : { forward: values.forward }),
    stdout: streams.stdout,
    stderr: streams.stderr,
  });
}
