import { VERSION } from '../version.js';

/** Where the CLI writes; tests pass their own streams. */
export interface CliStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `tooltrace ${VERSION}: streaming tools on an event bus, traced with OpenTelemetry

Usage:
  tooltrace demo [--fast]        run the demo agent and draw its trace (coming soon)
  tooltrace sidecar [options]    receive events and export OTLP (coming soon)
  tooltrace --help               show this help
  tooltrace --version            print the version
`;

/**
 * Runs the `tooltrace` command line with `argv` (without the node and script paths) and
 * returns the exit code. `cli.ts` only calls this; tests call it directly.
 */
export function runCli(argv: readonly string[], streams: CliStreams): Promise<number> {
  const [command] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    streams.stdout.write(USAGE);
    return Promise.resolve(0);
  }
  if (command === '--version' || command === '-v') {
    streams.stdout.write(`${VERSION}\n`);
    return Promise.resolve(0);
  }
  if (command === 'demo') {
    streams.stdout.write(`The demo is not written yet.\n\n${USAGE}`);
    return Promise.resolve(0);
  }
  streams.stderr.write(`tooltrace: unknown command '${command}'\n\n${USAGE}`);
  return Promise.resolve(2);
}
