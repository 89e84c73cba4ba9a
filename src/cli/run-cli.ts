import { ConfigurationError } from '../errors/index.js';
import { parseArgs } from 'node:util';
import { runDemo, runView } from '../demo/index.js';
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
  tooltrace demo [options]       run the demo agent live and draw its trace
      --fast                     run the scenario about fifty times faster
      --no-color                 plain log lines, no colours or redrawing
      --out FILE                 write what was exported as OTLP JSON
      --forward URL              also send the events to a sidecar (--listen)
  tooltrace view FILE [--no-color]
                                 draw the waterfall of an OTLP JSON file or an
                                 NDJSON event journal (tooltrace's or Nexus's)
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
    if (command === 'demo') return await demoCommand(rest, streams);
    if (command === 'view') return await viewCommand(rest, streams);
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

/** Colour and in-place redrawing only on a terminal, and never with `--no-color`/`NO_COLOR`. */
function useColor(noColor: boolean | undefined, stream: NodeJS.WritableStream): boolean {
  const env = process.env.NO_COLOR;
  return (
    noColor !== true &&
    (env === undefined || env === '') &&
    (stream as { isTTY?: boolean }).isTTY === true
  );
}

/** Runs `parse`, turning a parseArgs error into a {@link ConfigurationError} for `command`. */
function parseFlags<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new ConfigurationError(`${(error as Error).message} (see tooltrace --help)`, {
      setting: command,
      cause: error,
    });
  }
}

async function demoCommand(argv: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseFlags('demo', () =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        fast: { type: 'boolean' },
        'no-color': { type: 'boolean' },
        out: { type: 'string' },
        forward: { type: 'string' },
      },
    }),
  );
  if (positionals.length > 0) {
    throw new ConfigurationError(`unexpected argument '${positionals[0]}'`, { setting: 'demo' });
  }
  return runDemo({
    fast: values.fast === true,
    color: useColor(values['no-color'], streams.stdout),
    ...(values.out === undefined ? {} : { out: values.out }),
    ...(values.forward === undefined ? {} : { forward: values.forward }),
    stdout: streams.stdout,
    stderr: streams.stderr,
  });
}

async function viewCommand(argv: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseFlags('view', () =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { 'no-color': { type: 'boolean' } },
    }),
  );
  if (positionals.length !== 1) {
    throw new ConfigurationError('give exactly one FILE: tooltrace view FILE', { setting: 'view' });
  }
  return runView(positionals[0]!, {
    color: useColor(values['no-color'], streams.stdout),
    stdout: streams.stdout,
    stderr: streams.stderr,
  });
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
