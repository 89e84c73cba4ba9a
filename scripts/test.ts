/**
 * `npm test`: the build, then every check side by side — type-check, lint (typed ESLint),
 * format, the API report and Vitest — instead of one after another. Nothing is left out; what
 * changes is that the checks that compute (the compiler, ESLint) fill the time Vitest spends
 * waiting on the processes and sockets its tests start. Vitest is told the build is fresh, so
 * its global setup does not build a second time. Arguments go to Vitest
 * (`npm test -- --reporter=json …`). Vitest's output streams as it comes; each other check's is
 * printed whole when it ends, then a line per phase with its wall time, and the CPU time (user +
 * system, every process started included, from `/proc` where there is one) of the build and of
 * the checks together.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const node = process.execPath;

interface Phase {
  name: string;
  args: string[];
  /** Streams its output (Vitest) instead of printing it whole at the end. */
  live?: boolean;
  env?: Record<string, string>;
}

interface Finished {
  name: string;
  code: number;
  wallSeconds: number;
}

/** Runs one phase and prints what it said. */
function run(phase: Phase): Promise<Finished> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(node, phase.args, {
      cwd: ROOT,
      env: { ...process.env, ...phase.env },
      stdio: phase.live === true ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    const output: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('close', (code) => {
      const text = Buffer.concat(output).toString('utf8');
      if (text.trim() !== '') process.stdout.write(`\n== ${phase.name}\n${text}`);
      resolve({
        name: phase.name,
        code: code ?? 1,
        wallSeconds: (performance.now() - started) / 1000,
      });
    });
  });
}

const tsx = ['--import', 'tsx'];
const build: Phase[] = [
  { name: 'build: tsc', args: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'] },
  { name: 'build: bundle', args: [...tsx, 'scripts/bundle.ts'] },
];
const checks: Phase[] = [
  {
    name: 'vitest',
    args: ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)],
    live: true,
    env: { TOOLTRACE_DIST_BUILT: '1' },
  },
  {
    name: 'typecheck',
    args: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit'],
  },
  { name: 'lint: eslint', args: ['node_modules/eslint/bin/eslint.js', '.'] },
  { name: 'lint: prettier', args: ['node_modules/prettier/bin/prettier.cjs', '--check', '.'] },
];
const apiCheck: Phase = { name: 'api:check', args: [...tsx, 'scripts/api-report.ts', '--check'] };

/**
 * CPU seconds of the processes this one started and waited for (`cutime` + `cstime` of
 * `/proc/self/stat`, in clock ticks of 1/100 s), `undefined` without `/proc`.
 */
function childrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

const cpu: { phase: string; seconds: number | undefined }[] = [];
const finished: Finished[] = [];
let before = childrenCpuSeconds();
const measure = (phase: string): void => {
  const now = childrenCpuSeconds();
  cpu.push({
    phase,
    seconds: now === undefined || before === undefined ? undefined : now - before,
  });
  before = now;
};
for (const phase of build) {
  const done = await run(phase);
  finished.push(done);
  if (done.code !== 0) report(1);
}
measure('the build');
finished.push(...(await Promise.all([...checks.map(run), run(apiCheck)])));
measure('the checks');
report(finished.some((phase) => phase.code !== 0) ? 1 : 0);

function report(code: number): never {
  process.stdout.write('\n== npm test phases (wall time; the checks ran side by side)\n');
  for (const phase of finished) {
    process.stdout.write(
      `${phase.code === 0 ? 'ok  ' : 'FAIL'} ${phase.name.padEnd(16)} ${phase.wallSeconds.toFixed(1)} s\n`,
    );
  }
  for (const { phase, seconds } of cpu) {
    if (seconds !== undefined)
      process.stdout.write(`CPU time of ${phase}: ${seconds.toFixed(1)} s\n`);
  }
  process.exit(code);
}
