import { ConfigurationError } from '../errors/index.js';
import { runSidecar } from '../sidecar/index.js';
import { VERSION } from '../version.js';
import { parseSidecarArgs, SIDECAR_USAGE } from './parse-sidecar-args.js';

/** Where the CLI writes; tests pass their own streams. */
export interface CliStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `tooltrace ${VERSION}: streaming tools on an event bus, traced with OpenTelemetry

Usage:
  tooltrace demo [--fast]        run the demo agent and draw its trace
  tooltrace sidecar [options]    receive events (stdin, files, HTTP) and export OTLP;
                                 tooltrace sidecar --help for its options
  tooltrace --help               show this help
  tooltrace --version            print the version
`;

/**
 * Runs the `tooltrace` command line with `argv` (without the node and script paths) and
 * returns the exit code. `cli.ts` only calls this; tests call it directly.
 */
export async function runCli(argv: readonly string[], streams: CliStreams): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      streams.stdout.write(USAGE);
      return 0;
    }
    if (command === '--version' || command === '-v') {
      streams.stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (command === 'demo') {
      streams.stdout.write(`The demo is not written yet.\n\n${USAGE}`);
      return 0;
    }
    if (command === 'sidecar') return await sidecarCommand(rest, streams);
    streams.stderr.write(`tooltrace: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  } catch (error) {
    if (error instanceof ConfigurationError) {
      streams.stderr.write(`tooltrace ${command ?? ''}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

async function sidecarCommand(argv: readonly string[], streams: CliStreams): Promise<number> {
  const parsed = parseSidecarArgs(argv);
  if (parsed.help) {
    streams.stdout.write(SIDECAR_USAGE);
    return 0;
  }
  const sidecar = await runSidecar({
    ...parsed.options,
    log: (line) => void streams.stderr.write(`${line}\n`),
  });
  const onSignal = (signal: NodeJS.Signals): void => void sidecar.stop(`received ${signal}`);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    return await sidecar.done;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
