import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The repository root: where `dist/cli.js` runs from. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a finished `tooltrace` child process wrote and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment for a child: the test's own, minus anything that would change what it draws
 * or where it exports (a developer's shell may set these), with `COLUMNS` wide enough that no
 * waterfall row is cut, plus `extra`.
 */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('OTEL_') || name.startsWith('TOOLTRACE_')) delete env[name];
  }
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  return { ...env, COLUMNS: '1000', ...extra };
}

/**
 * Starts the built CLI, `node dist/cli.js ...args` (Vitest's global setup builds `dist`), with
 * pipes for stdio (so stdout is no TTY).
 */
export function startCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = childEnv(),
): ChildProcess {
  return spawn(process.execPath, ['dist/cli.js', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Not an assertion: a child that hangs is killed before the test times out, not left behind.
    timeout: 25_000,
    killSignal: 'SIGKILL',
  });
}

/** Runs the CLI to the end and collects its output. */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = childEnv(),
): Promise<CliRun> {
  const child = startCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

const TRACE_HEADER = /^trace [0-9a-f]{32} {2}\d+ spans? {2}/;

/**
 * The waterfall's lines in `stdout`: every `trace <id>` block (header and rows), from the first
 * header to the first line that belongs to no block; blank lines between blocks are dropped.
 */
export function waterfallOf(stdout: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => TRACE_HEADER.test(line));
  if (start === -1) return [];
  const drawn: string[] = [];
  for (let index = start; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (TRACE_HEADER.test(line) || line.startsWith('  ')) drawn.push(line);
    else if (!(line === '' && TRACE_HEADER.test(lines[index + 1] ?? ''))) break;
  }
  return drawn;
}

/** The waterfall row of the span named `execute_tool <tool>`, or `undefined`. */
export function rowOf(waterfall: readonly string[], tool: string): string | undefined {
  return waterfall.find((line) => new RegExp(`[ ─]execute_tool ${tool} `).test(line));
}

/** The scenario's tools, in the order the demo agent calls them (nested calls last). */
export const SCENARIO_TOOLS = [
  'write_report',
  'index_files',
  'fetch_prices',
  'slow_search',
  'plan_trip',
  'lookup_weather',
  'research',
  'summarize',
] as const;
