/**
 * tooltrace in process against the tracers users would otherwise pick, side by side in one run
 * (`npm run bench:peers`):
 *
 * - AI SDK 7 `generateText` with the AI SDK's mock model (`ai/test`): untraced, `@ai-sdk/otel`
 *   registered, tooltrace (`traceAiSdkTools` + `traceToolCalls`), the floor;
 * - LangChain `tool.invoke` (one call, or ten inside one `RunnableLambda`): untraced,
 *   OpenInference's `LangChainInstrumentation`, tooltrace (`TooltraceCallbackHandler` +
 *   `traceLangChainTools` + `traceToolCalls`), the floor;
 *
 * each with N = 0, 10, 100 preliminary results (chunks) per tool call, one and ten tool calls per
 * model step. The floor makes the trace tooltrace makes by hand with the OpenTelemetry SDK (no
 * bus, no tooltrace code): what the SDK itself costs for what the trace shows; before measuring,
 * the bench checks that its spans carry the same names, attributes, events and status as
 * tooltrace's. The peers are installed by this script into a scratch folder under
 * ~/.cache/tooltrace (not dependencies of the project); they run on Node 24 (`ai` 7 needs 22+),
 * from `scripts/node-binary.sh 24`. `bench/peers/contender.ts` is bundled there with tooltrace's
 * source, so every package, `@opentelemetry/api` included, resolves once, from that folder.
 *
 * Each round runs one process per family in which the four sides take turns batch by batch, the
 * side that goes first rotated every batch, so they meet the same load at the same moments.
 * Every side traces into the same provider setup (NodeTracerProvider, BatchSpanProcessor, an
 * exporter that drops every batch). A batch runs about `BENCH_BATCH_MS` of calls (sized from the
 * warm-up) and a young-generation collection, timed by CPU time (user + system, all threads),
 * after the span queue was flushed. A side's figure for a workload is its least batch over all
 * `BENCH_ROUNDS` rounds: on a shared machine other work only adds to a batch's time, by bursts.
 * The µs printed are those; a ratio is of what two sides add above untraced, printed with the
 * least and greatest of the rounds' own ratios. With ten calls per step the ratio is the
 * whole request's cost per call; the marginal cost per call beyond the first (the peer's
 * request-level spans, `invoke_agent`, `step`, `chat`, shared), (10 × per call at N/10 − per
 * call at N/1) / 9 per side, is printed below it.
 *
 * Heap kept: one process per contender and N runs 10,000 calls after a warm-up and reports the
 * heap still used after two full collections, per 1,000 calls.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 12);
const BATCH_MS = Number(process.env.BENCH_BATCH_MS ?? 40);
const HEAP_CALLS = Number(process.env.BENCH_HEAP_CALLS ?? 10_000);
const ONLY = process.env.BENCH_ONLY; // 'ai' or 'lc': one family only
const SKIP_HEAP = process.env.BENCH_SKIP_HEAP === '1';
const SAVE = process.env.BENCH_SAVE; // a file to write every batch's figures to
const LOAD = process.env.BENCH_LOAD; // a file written by BENCH_SAVE: print it, measure nothing
const CACHE = process.env.TOOLTRACE_CACHE_DIR ?? join(homedir(), '.cache/tooltrace');
const SCRATCH = join(CACHE, 'peers-bench');
const { version: VERSION } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
};

/** The peers and the SDK they share, pinned so two runs measure the same code. */
const PEERS: Record<string, string> = {
  ai: '7.0.185',
  '@ai-sdk/otel': '1.0.185',
  '@arizeai/openinference-instrumentation-langchain': '4.1.1',
  '@langchain/core': '1.4.0',
  '@opentelemetry/api': '1.9.1',
  '@opentelemetry/core': '2.12.1',
  '@opentelemetry/sdk-trace-base': '2.12.1',
  '@opentelemetry/sdk-trace-node': '2.12.1',
  zod: '4.6.7',
};

const FAMILIES = {
  ai: {
    untraced: 'ai-untraced',
    peer: 'ai-otel',
    tooltrace: 'ai-tooltrace',
    floor: 'ai-floor',
    label: 'AI SDK 7',
    peerName: '@ai-sdk/otel',
  },
  lc: {
    untraced: 'lc-untraced',
    peer: 'lc-openinference',
    tooltrace: 'lc-tooltrace',
    floor: 'lc-floor',
    label: 'LangChain',
    peerName: 'OpenInference',
  },
} as const;
type Family = keyof typeof FAMILIES;
const SIDES = ['untraced', 'peer', 'tooltrace', 'floor'] as const;
type Side = (typeof SIDES)[number];

// BENCH_WORKLOADS=100/1,100/10 measures those alone (the contender reads it too).
const WORKLOADS = ['0/1', '10/1', '100/1', '0/10', '10/10', '100/10'].filter(
  (workload) => process.env.BENCH_WORKLOADS?.split(',').includes(workload) ?? true,
);
// BENCH_FLOOR_EVENTS: span events the floor keeps (59, tooltrace's at N = 100; the contender
// reads it). Another number makes another trace than tooltrace's: the floor is not checked then.
const FLOOR_EVENTS = process.env.BENCH_FLOOR_EVENTS ?? '59';

function installPeers(): void {
  mkdirSync(SCRATCH, { recursive: true });
  const manifest = JSON.stringify(
    { name: 'tooltrace-peers-bench', private: true, type: 'module', dependencies: PEERS },
    null,
    2,
  );
  const path = join(SCRATCH, 'package.json');
  const installed = existsSync(path) && readFileSync(path, 'utf8') === manifest;
  if (installed && existsSync(join(SCRATCH, 'node_modules/ai'))) return;
  writeFileSync(path, manifest);
  console.error(`installing the peers into ${SCRATCH}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: SCRATCH,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function bundleContender(): Promise<string> {
  // One bundle per checkout: two worktrees running the bench at once do not overwrite each other.
  const outfile = join(SCRATCH, `contender-${basename(ROOT)}.mjs`);
  await build({
    entryPoints: [join(ROOT, 'bench/peers/contender.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // Packages resolve at run time from the scratch folder: the peers' versions, one API.
    packages: 'external',
    logLevel: 'error',
    plugins: [
      {
        // `src/version.ts` reads ../package.json beside itself; the bundle lives elsewhere.
        name: 'version',
        setup(context) {
          context.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, () => ({
            contents: `export const VERSION = ${JSON.stringify(VERSION)};`,
            loader: 'js',
          }));
        },
      },
    ],
  });
  return outfile;
}

function nodeBinary(): string {
  return execFileSync('bash', [join(ROOT, 'scripts/node-binary.sh'), '24'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

function runContender(node: string, script: string, args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [script, ...args], {
      cwd: SCRATCH,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`${args.join(' ')} exited with ${code}:\n${stderr}`));
        return;
      }
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
    });
  });
}

function rotated<T>(list: readonly T[], by: number): T[] {
  const shift = by % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

/** CPU ns per tool call of every timed batch of one process, by side and workload. */
type Batches = Record<Side, Record<string, number[]>>;

/** The batches of one round, per family. */
type Round = Partial<Record<Family, Batches>>;

/**
 * A side's figure for a workload: the least of its batches. On a shared machine what other
 * processes do only adds to a batch's CPU time (caches, memory bandwidth, the sibling
 * hyperthread), by bursts, and a whole round can meet more of it than another; the least batch is
 * the one that met the least. Every batch ends with a timed young-generation collection, so the
 * least batch still pays for the garbage its calls made.
 */
function least(values: number[]): number {
  return Math.min(...values);
}

/** The cost of a call beyond the first of a step: (10 × per call at N/10 − per call at N/1) / 9. */
function beyond(perCall10: number, perCall1: number): number {
  return (10 * perCall10 - perCall1) / 9;
}

/** A side's figure per tool call for a row (a workload, or its marginal) over some batches. */
function figure(batches: Batches[], side: Side, workload: string, marginal: boolean): number {
  const own = least(batches.flatMap((round) => round[side][workload]!));
  if (!marginal) return own;
  const single = `${workload.split('/')[0]}/1`;
  return beyond(own, least(batches.flatMap((round) => round[side][single]!)));
}

/** A ratio over every round's batches, with the least and greatest of the rounds' own. */
function ratioCell(value: number, perRound: number[]): string {
  const sorted = [...perRound].sort((a, b) => a - b);
  return `${value.toFixed(2)} (${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
}

function print(families: Family[], rounds: Round[]): void {
  for (const family of families) {
    const { label, peerName } = FAMILIES[family];
    const all = rounds.map((round) => round[family]!);
    console.log(
      `\n${label} (peer: ${peerName}): CPU per tool call, µs: untraced, and what each side adds ` +
        `to it (least batch of ${rounds.length} rounds); ratios of what two sides add ` +
        `(least–greatest of the rounds' own); "m": marginal, the 2nd to 10th call of a step`,
    );
    console.log(
      `${'N/per step'.padEnd(12)}${'untraced'.padStart(9)}${'peer +'.padStart(8)}` +
        `${'tooltrace +'.padStart(12)}${'floor +'.padStart(9)}   ` +
        `${'tooltrace / peer'.padEnd(20)}${'floor / peer'.padEnd(20)}tooltrace / floor`,
    );
    const rows = WORKLOADS.flatMap((workload) => {
      const [n, perStep] = workload.split('/');
      return perStep === '10' && WORKLOADS.includes(`${n}/1`)
        ? [
            { workload, marginal: false },
            { workload, marginal: true },
          ]
        : [{ workload, marginal: false }];
    });
    for (const { workload, marginal } of rows) {
      const cost = Object.fromEntries(
        SIDES.map((side) => [side, figure(all, side, workload, marginal)]),
      ) as Record<Side, number>;
      const added = (side: Side): number => cost[side] - cost.untraced;
      const roundRatios = (over: Side, under: Side): number[] =>
        all.map((batches) => {
          const of = (side: Side): number => figure([batches], side, workload, marginal);
          return (of(over) - of('untraced')) / (of(under) - of('untraced'));
        });
      const cell = (over: Side, under: Side): string =>
        ratioCell(added(over) / added(under), roundRatios(over, under)).padEnd(20);
      const us = (ns: number, width: number): string => (ns / 1e3).toFixed(1).padStart(width);
      console.log(
        `${(marginal ? `${workload} m` : workload).padEnd(12)}${us(cost.untraced, 9)}` +
          `${us(added('peer'), 8)}${us(added('tooltrace'), 12)}${us(added('floor'), 9)}   ` +
          `${cell('tooltrace', 'peer')}${cell('floor', 'peer')}${cell('tooltrace', 'floor').trimEnd()}`,
      );
    }
  }
}

async function heap(node: string, script: string, families: Family[]): Promise<void> {
  console.log(
    `\nheap kept after ${HEAP_CALLS.toLocaleString('en')} calls (one call per step): ` +
      `KB per 1,000 calls above the untraced program [MB in all above it]`,
  );
  console.log(
    `${'contender'.padEnd(20)}${['N = 0', 'N = 10', 'N = 100'].map((h) => h.padStart(18)).join('')}`,
  );
  for (const family of families) {
    const kept: Record<string, number[]> = {};
    for (const side of SIDES) {
      const contender = FAMILIES[family][side];
      kept[side] = [];
      for (const n of [0, 10, 100]) {
        const result = (await runContender(node, script, [
          contender,
          'heap',
          String(n),
          String(HEAP_CALLS),
        ])) as { kept: number };
        kept[side].push(result.kept);
      }
    }
    for (const side of SIDES) {
      const cells = kept[side]!.map((bytes, index) => {
        const above = side === 'untraced' ? bytes : bytes - kept.untraced![index]!;
        return `${(((above / HEAP_CALLS) * 1_000) / 1_024).toFixed(0)} [${(above / 1024 / 1024).toFixed(2)}]`.padStart(
          18,
        );
      });
      console.log(`${FAMILIES[family][side].padEnd(20)}${cells.join('')}`);
    }
  }
}

/**
 * Checks that the floor makes the trace tooltrace makes: per family and N = 0, 10, 100, the
 * tool span's name, kind, status, attributes (ids and times by type), number of events, their
 * names and attribute keys. A floor that recorded less would look cheaper than it is.
 */
async function checkFloor(node: string, script: string, families: Family[]): Promise<void> {
  for (const family of families) {
    const { shapes } = (await runContender(node, script, [family, 'shape'])) as {
      shapes: { tooltrace: unknown[]; floor: unknown[] };
    };
    const ours = JSON.stringify(shapes.tooltrace);
    const floor = JSON.stringify(shapes.floor);
    if (shapes.tooltrace.length !== 3 || ours !== floor) {
      throw new Error(
        `the floor's ${family} spans differ from tooltrace's:\n` +
          `tooltrace ${ours}\nfloor     ${floor}`,
      );
    }
  }
}

async function measure(node: string, script: string, families: Family[]): Promise<Round[]> {
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const figures: Round = {};
    for (const family of rotated(families, round)) {
      const result = (await runContender(node, script, [
        family,
        'cpu',
        String(BATCHES),
        String(BATCH_MS),
      ])) as { perCall: Batches };
      figures[family] = result.perCall;
    }
    rounds.push(figures);
    console.error(`round ${round + 1} of ${ROUNDS} done`);
  }
  return rounds;
}

async function main(): Promise<void> {
  const families = (Object.keys(FAMILIES) as Family[]).filter(
    (family) => ONLY === undefined || ONLY === family,
  );
  // BENCH_LOAD: print the figures of a run saved by BENCH_SAVE, without measuring again.
  if (LOAD !== undefined) {
    const rounds = JSON.parse(readFileSync(LOAD, 'utf8')) as Round[];
    print(
      families.filter((family) => rounds[0]![family] !== undefined),
      rounds,
    );
    return;
  }
  installPeers();
  // BENCH_CONTENDER: a contender bundle built elsewhere (another revision, to compare with).
  const script = process.env.BENCH_CONTENDER ?? (await bundleContender());
  const node = nodeBinary();
  const checked = FLOOR_EVENTS === '59';
  if (checked) await checkFloor(node, script, families);
  console.log(
    `Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}, ${ROUNDS} rounds, ` +
      `${BATCHES} batches per workload and side of about ${BATCH_MS} ms, the four sides of a ` +
      `family interleaved in one process; ` +
      (checked
        ? `the floor's spans match tooltrace's`
        : `the floor keeps ${FLOOR_EVENTS} span events (not tooltrace's trace)`),
  );
  const rounds = await measure(node, script, families);
  if (SAVE !== undefined) writeFileSync(SAVE, JSON.stringify(rounds));
  print(families, rounds);
  if (!SKIP_HEAP) await heap(node, script, families);
}

await main();
