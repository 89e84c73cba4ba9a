import { ConfigurationError } from '../errors/index.js';
// Past the pipeline's barrel on purpose: the barrel loads the SDK, which `--help` must not.
import { withoutUrlCredentials } from '../sidecar/pipeline/url-credentials.js';
import { VERSION } from '../version.js';
import type { CliStreams } from './cli-streams.js';
import { DEMO_USAGE, USAGE, VIEW_USAGE } from './usage.js';

export type { CliStreams } from './cli-streams.js';

/** A subcommand: its usage, and its code, loaded only when it runs (start-up stays short). */
interface Command {
  usage: () => Promise<string>;
  run: (argv: readonly string[], streams: CliStreams) => Promise<number>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  demo: {
    usage: () => Promise.resolve(DEMO_USAGE),
    run: async (argv, streams) => (await import('./demo-command.js')).demoCommand(argv, streams),
  },
  view: {
    usage: () => Promise.resolve(VIEW_USAGE),
    run: async (argv, streams) => (await import('./view-command.js')).viewCommand(argv, streams),
  },
  sidecar: {
    usage: async () => (await import('./parse-sidecar-args.js')).SIDECAR_USAGE,
    run: async (argv, streams) =>
      (await import('./sidecar-command.js')).sidecarCommand(argv, streams),
  },
};

/**
 * Runs the `tooltrace` command line with `argv` (without the node and script paths) and
 * returns the exit code. `cli.ts` only calls this; tests call it directly. `COMMAND --help`
 * prints the command's usage and starts nothing; a bad flag or setting is one line on stderr
 * naming it, and exit code 2.
 */
export async function runCli(argv: readonly string[], streams: CliStreams): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    streams.stdout.write(USAGE);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    streams.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    streams.stderr.write(`tooltrace: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  const flags = rest.slice(0, rest.includes('--') ? rest.indexOf('--') : rest.length);
  try {
    if (flags.includes('--help') || flags.includes('-h')) {
      streams.stdout.write(await command.usage());
      return 0;
    }
    return await command.run(rest, streams);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      // A refused endpoint is quoted in the message: its credentials are not.
      streams.stderr.write(`tooltrace ${name}: ${withoutUrlCredentials(error.message)}\n`);
      return 2;
    }
    const peer = missingPeer(error);
    if (peer !== undefined) {
      streams.stderr.write(
        `tooltrace ${name}: the package ${peer} is not installed beside tooltrace (it is its peer dependency, which npm installs unless told not to, as with --legacy-peer-deps); install it: npm install ${peer}\n`,
      );
      return 2;
    }
    throw error;
  }
}

/**
 * The peer dependency a subcommand's code could not load (`@opentelemetry/api`, outside the
 * bundle on purpose), or `undefined` for any other error.
 */
function missingPeer(error: unknown): string | undefined {
  if (
    !(error instanceof Error) ||
    (error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND'
  ) {
    return undefined;
  }
  return /Cannot find package '(@opentelemetry\/api)'/.exec(error.message)?.[1];
}
