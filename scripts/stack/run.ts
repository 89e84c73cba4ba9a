/**
 * `npm run stack`: the Collector, Jaeger v2 and Prometheus built from source (once, cached) and
 * run in the foreground on 127.0.0.1, wired as docker-compose.yml wires them (no Tempo). Prints
 * the four addresses and `stack ready` on stdout before anything else; build progress and the
 * programs' trouble go to stderr. Ctrl-C (SIGINT) or SIGTERM stops all three and removes their
 * temporary folders. A missing Go, a failed build, a port in use or a program that dies is one
 * line on stderr and exit 1.
 *
 *   npm run stack
 *   npm run stack -- --otlp-http-port 4318 --otlp-grpc-port 4317 --jaeger-port 16686 --prometheus-port 9090
 */
import { parseArgs } from 'node:util';
import {
  assertPortFree,
  buildStack,
  StackError,
  startStack,
  type Stack,
  type StackPorts,
} from './stack.js';

const USAGE = `Usage: npm run stack [-- options]

Builds (first time: minutes; cached in ~/.cache/tooltrace/stack) and runs an OpenTelemetry
Collector with otel-collector-config.yaml, Jaeger v2 and Prometheus on 127.0.0.1, until Ctrl-C.

Options (default: free ports):
  --otlp-http-port N     the Collector's OTLP/HTTP receiver
  --otlp-grpc-port N     the Collector's OTLP/gRPC receiver
  --jaeger-port N        Jaeger's query API and UI
  --prometheus-port N    Prometheus's HTTP API
  -h, --help             show this help
`;

function port(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 65_535) {
    throw new StackError(`${flag} must be a port number (1 to 65535), not ${JSON.stringify(text)}`);
  }
  return value;
}

function parsePorts(args: string[]): StackPorts | undefined {
  const { values } = parseArgs({
    args,
    options: {
      'otlp-http-port': { type: 'string' },
      'otlp-grpc-port': { type: 'string' },
      'jaeger-port': { type: 'string' },
      'prometheus-port': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help === true) return undefined;
  return {
    otlpHttp: port(values['otlp-http-port'], '--otlp-http-port'),
    otlpGrpc: port(values['otlp-grpc-port'], '--otlp-grpc-port'),
    jaeger: port(values['jaeger-port'], '--jaeger-port'),
    prometheus: port(values['prometheus-port'], '--prometheus-port'),
  };
}

async function main(): Promise<number> {
  let ports: StackPorts | undefined;
  try {
    ports = parsePorts(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`stack: ${(error as Error).message}\n`);
    return 2;
  }
  if (ports === undefined) {
    process.stdout.write(USAGE);
    return 0;
  }

  // A signal during the build or the start-up stops what started so far, then exits.
  let stopping = false;
  let stack: Stack | undefined;
  const building = new AbortController();
  const stopped = new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      building.abort();
      process.stderr.write(`stack: ${signal}, stopping\n`);
      void (stack?.stop() ?? Promise.resolve()).then(() => resolve(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

  try {
    // A port given and taken fails at once, before a build that can take many minutes.
    for (const [what, port] of Object.entries(ports) as [string, number | undefined][]) {
      if (port !== undefined) await assertPortFree(port, what);
    }
    const binaries = await buildStack({ signal: building.signal });
    if (stopping) return await stopped;
    process.stderr.write('stack: starting Jaeger, Prometheus and the Collector\n');
    stack = await startStack(binaries, ports);
  } catch (error) {
    if (stopping) return await stopped;
    if (error instanceof StackError && error.shown) return 1;
    const message = error instanceof StackError ? error.message : String(error);
    process.stderr.write(`stack: ${message}\n`);
    return 1;
  }
  if (stopping) {
    await stack.stop();
    return await stopped;
  }
  process.stdout.write(`${stack.lines.join('\n')}\nstack ready\n`);

  // One of them dying ends the stack: what is left would look up but lose data.
  const died = Promise.race(
    [stack.collector.process, stack.jaeger.process, stack.prometheus.process].map((child) =>
      child.exited.then(() => child),
    ),
  ).then(async (child) => {
    if (stopping) return stopped;
    stopping = true;
    const tail = child.log().trim().split('\n').slice(-20).join('\n');
    process.stderr.write(`${tail}\nstack: ${child.name} exited; stopping the others\n`);
    await stack.stop();
    return 1;
  });
  return Promise.race([stopped, died]);
}

process.exitCode = await main();
