#!/usr/bin/env node
import { runCli } from './cli/run-cli.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
});
exitOnceWritten();

/**
 * The command is over when `runCli` returns: the process ends as soon as standard output and
 * error are written, whatever timers or sockets are left. A sidecar that gave up on an endpoint
 * at its shutdown timeout would otherwise live on until the OpenTelemetry exporter's own retries
 * and request timeout ran out (a minute, for a stalled metrics endpoint).
 */
function exitOnceWritten(): void {
  const timer = setTimeout(() => {
    if (process.stdout.writableLength + process.stderr.writableLength === 0) process.exit();
    else timer.refresh();
  }, 10);
  // Unreferenced: a process with nothing left ends by itself without waiting for it.
  timer.unref();
}
