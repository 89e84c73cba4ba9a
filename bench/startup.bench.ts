/**
 * How long `tooltrace sidecar` takes to start and stop, against a bare script that only loads the
 * SDK, alternating the two and reporting medians and their ratio (the bar: within 1.2x):
 *
 * - `node dist/cli.js sidecar --stdin < /dev/null`: start, read an empty input, flush, exit, into
 *   a local receiver (`OTEL_METRICS_EXPORTER=none`, as in `sidecar.bench.ts`, and with metrics
 *   on, which loads the metrics SDK and exporter and exports once at shutdown);
 * - `node bare-sdk.mjs`: imports `@opentelemetry/sdk-trace-base` and `@opentelemetry/resources`,
 *   makes a `BasicTracerProvider`, exits.
 *
 *   npm run build && npx tsx bench/startup.bench.ts [rounds]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOtlpReceiver } from '../src/testing/index.js';

const ROUNDS = Number(process.argv[2] ?? 15);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
/** Under node_modules, so its imports resolve to the project's packages. */
const BARE = join(ROOT, 'node_modules', '.cache', 'tooltrace-bench', 'bare-sdk.mjs');

/** Seconds from spawn to exit of `node ...args` with stdin from /dev/null. */
async function time(args: readonly string[], env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => (stderr += text));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}:\n${stderr}`);
  return (performance.now() - started) / 1000;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[sorted.length >> 1]!;
}

// A real receiver, so a metrics export at shutdown is answered as it would be.
const receiver = await startOtlpReceiver();
if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
mkdirSync(join(BARE, '..'), { recursive: true });
writeFileSync(
  BARE,
  [
    "import { resourceFromAttributes } from '@opentelemetry/resources';",
    "import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';",
    "new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'bare' }) });",
    '',
  ].join('\n'),
);
const sidecar = ['dist/cli.js', 'sidecar', '--stdin', '--status-interval', '0'];
const bare: number[] = [];
const withoutMetrics: number[] = [];
const withMetrics: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  bare.push(await time([BARE], {}));
  withoutMetrics.push(await time(sidecar, { OTEL_METRICS_EXPORTER: 'none' }));
  withMetrics.push(await time(sidecar, {}));
}
const base = median(bare);
console.log(
  `start-up, median of ${ROUNDS} alternating rounds, Node ${process.version}, load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
console.log(`bare script loading the SDK           ${base.toFixed(3)} s  1.00x`);
for (const [name, values] of [
  ['tooltrace sidecar, metrics off', withoutMetrics],
  ['tooltrace sidecar, metrics on', withMetrics],
] as const) {
  const seconds = median(values);
  console.log(`${name.padEnd(38)}${seconds.toFixed(3)} s  ${(seconds / base).toFixed(2)}x`);
}
await receiver.close();
