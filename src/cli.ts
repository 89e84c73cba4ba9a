#!/usr/bin/env node
import { runCli } from './cli/run-cli.js';

quietWhenReaderLeaves();
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
});
exitOnceWritten();

/**
 * A reader that went away is not an error of the command: `tooltrace view journal | head` ends
 * quietly with the command's own exit code once `head` has its lines, instead of dying on EPIPE
 * with a stack trace. What is left to print is dropped, while the command still finishes its work
 * (the demo's export to a collector); a sidecar whose standard error was closed goes on exporting
 * without its log.
 */
function quietWhenReaderLeaves(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  process.stderr.on('error', () => {});
}

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
