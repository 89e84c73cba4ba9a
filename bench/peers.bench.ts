/**
 * tooltrace in process against the tracers users would otherwise pick, side by side in one run
 * (`npm run bench:peers`):
 *
 * - AI SDK 7 `generateText` with the AI SDK's mock model (`ai/test`): untraced, `@ai-sdk/otel`
 *   registered, tooltrace (`traceAiSdkTools` + `traceToolCalls`);
 * - LangChain `tool.invoke` (one call, or ten inside one `RunnableLambda`): untraced,
 *   OpenInference's `LangChainInstrumentation`, tooltrace (`TooltraceCallbackHandler` +
 *   `traceLangChainTools` + `traceToolCalls`);
 *
 * each with N = 0, 10, 100 preliminary results (chunks) per tool call, one and ten tool calls per
 * model step. The peers are installed by this script into a scratch folder under
 * ~/.cache/tooltrace (not dependencies of the project); they run on Node 24 (`ai` 7 needs 22+),
 * from `scripts/node-binary.sh 24`. `bench/peers/contender.ts` is bundled there with tooltrace's
 * source, so every package, `@opentelemetry/api` included, resolves once, from that folder.
 *
 * Each round runs one process per family in which the three sides (untraced, peer, tooltrace)
 * take turns batch by batch, the side that goes first rotated every batch, so the three meet the
 * same load at the same moments: on a machine shared with other work the load changes by the
 * second, and a process per side (as this bench first did) let one side meet a busy minute and
 * another a quiet one — two runs then disagreed by up to 0.6 on a ratio. Every side traces into
 * the same provider setup (NodeTracerProvider, BatchSpanProcessor, an exporter that drops every
 * batch). A process times `BENCH_BATCHES` batches per workload and side by CPU time (user +
 * system, all threads: GC and compiler included) and reports the median per tool call. A round's
 * ratio is (tooltrace − untraced) / (peer − untraced), the CPU each adds per tool call above the
 * untraced side of the same process; the figure printed is the median over `BENCH_ROUNDS`
 * rounds with the spread (least – greatest). With ten calls per step the ratio is the whole
 * request's cost per call; the marginal cost per call beyond the first (the peer's
 * request-level spans, `invoke_agent`, `step`, `chat`, shared) is printed beside it.
 *
 * Heap kept: one process per contender and N runs 10,000 calls after a warm-up and reports the
 * heap still used after two full collections, per 1,000 calls.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 9);
const HEAP_CALLS = Number(process.env.BENCH_HEAP_CALLS ?? 10_000);
const ONLY = process.env.BENCH_ONLY; // 'ai' or 'lc': one family only
const SKIP_HEAP = process.env.BENCH_SKIP_HEAP === '1';
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
  ai: { untraced: 'ai-untraced', peer: 'ai-otel', tooltrace: 'ai-tooltrace', label: 'AI SDK 7' },
  lc: {
    untraced: 'lc-untraced',
    peer: 'lc-openinference',
    tooltrace: 'lc-tooltrace',
    label: 'LangChain',
  },
} as const;
type Family = keyof typeof FAMILIES;

const WORKLOADS = ['0/1', '10/1', '100/1', '0/10', '10/10', '100/10'];

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
  const outfile = join(SCRATCH, 'contender.mjs');
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function rotated<T>(list: readonly T[], by: number): T[] {
  const shift = by % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

type PerCall = Record<string, number>;

/** The figures of one round, per family: ns per tool call of each contender, by workload. */
type Round = Partial<Record<Family, { untraced: PerCall; peer: PerCall; tooltrace: PerCall }>>;

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${median(values).toFixed(2)} (${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
}

function print(families: Family[], rounds: Round[]): void {
  for (const family of families) {
    const { label } = FAMILIES[family];
    console.log(
      `\n${label}: CPU per tool call (median of ${rounds.length} rounds, µs) and ` +
        `tooltrace / peer above untraced, median (least–greatest) of the rounds' ratios`,
    );
    console.log(
      `${'N/calls per step'.padEnd(17)}${'untraced'.padStart(10)}${'peer +'.padStart(10)}` +
        `${'tooltrace +'.padStart(13)}   ratio per call      marginal ratio (2nd–10th call)`,
    );
    for (const workload of WORKLOADS) {
      const of = (side: 'untraced' | 'peer' | 'tooltrace'): number[] =>
        rounds.map((round) => round[family]![side][workload]!);
      const added = (side: 'peer' | 'tooltrace'): number[] =>
        rounds.map((round) => round[family]![side][workload]! - round[family]!.untraced[workload]!);
      const ratios = rounds.map(
        (round) =>
          (round[family]!.tooltrace[workload]! - round[family]!.untraced[workload]!) /
          (round[family]!.peer[workload]! - round[family]!.untraced[workload]!),
      );
      let marginal = '';
      const [n, perStep] = workload.split('/');
      if (perStep === '10') {
        // Per call beyond the first: (10 × per call at 10/step − per call at 1/step) / 9.
        const single = `${n}/1`;
        const beyond = (round: Round, side: 'untraced' | 'peer' | 'tooltrace'): number =>
          (10 * round[family]![side][workload]! - round[family]![side][single]!) / 9;
        const marginals = rounds.map(
          (round) =>
            (beyond(round, 'tooltrace') - beyond(round, 'untraced')) /
            (beyond(round, 'peer') - beyond(round, 'untraced')),
        );
        marginal = summary(marginals);
      }
      console.log(
        `${workload.padEnd(17)}${(median(of('untraced')) / 1e3).toFixed(1).padStart(10)}` +
          `${(median(added('peer')) / 1e3).toFixed(1).padStart(10)}` +
          `${(median(added('tooltrace')) / 1e3).toFixed(1).padStart(13)}   ` +
          `${summary(ratios).padEnd(20)}${marginal}`,
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
    for (const side of ['untraced', 'peer', 'tooltrace'] as const) {
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
    for (const side of ['untraced', 'peer', 'tooltrace'] as const) {
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

async function main(): Promise<void> {
  installPeers();
  // BENCH_CONTENDER: a contender bundle built elsewhere (another revision, to compare with).
  const script = process.env.BENCH_CONTENDER ?? (await bundleContender());
  const node = nodeBinary();
  const families = (Object.keys(FAMILIES) as Family[]).filter(
    (family) => ONLY === undefined || ONLY === family,
  );
  console.log(
    `Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}, ${ROUNDS} rounds, ` +
      `${BATCHES} batches per workload and side, the three sides of a family interleaved in one process`,
  );
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const figures: Round = {};
    for (const family of rotated(families, round)) {
      const result = (await runContender(node, script, [family, 'cpu', String(BATCHES)])) as {
        perCall: { untraced: PerCall; peer: PerCall; tooltrace: PerCall };
      };
      figures[family] = result.perCall;
    }
    rounds.push(figures);
    console.error(`round ${round + 1} of ${ROUNDS} done`);
  }
  print(families, rounds);
  if (!SKIP_HEAP) await heap(node, script, families);
}

await main();
