/**
 * How fast `tooltrace sidecar` turns a journal into exported spans, against the straightforward
 * SDK pipeline and the `JSON.parse` floor, all three as child processes on the same generated
 * journal into the same local receiver, side by side in one run:
 *
 * - floor: a process that reads the lines from stdin and `JSON.parse`s each, nothing else;
 * - straightforward (`straightforward-pipeline.ts`): read, `JSON.parse`, one SDK span per call
 *   with the same span content as the sidecar, `BatchSpanProcessor` (queue raised so it drops
 *   nothing), the stock OTLP/HTTP exporter of the protocol;
 * - sidecar: the built CLI, `node dist/cli.js sidecar --stdin < journal.jsonl`.
 *
 *   npm run build && npx tsx bench/sidecar.bench.ts [calls] [rounds]
 *
 * Each process is timed from spawn to exit (both pipelines exit after their last export was
 * accepted), start-up included for all three. Both pipelines run with `OTEL_METRICS_EXPORTER=none`
 * (the straightforward one records no metrics, so the sidecar's would be extra work), and both
 * are checked for loss: every `execute_tool` span must arrive (distinct span ids). Each round
 * runs straightforward and sidecar alternately on http/protobuf, then on http/json, then the
 * floor; the median of the rounds is reported, with each process's peak RSS (`maxRSS`) and the
 * CPU time it used (user + system, all threads), both read in the child at exit by a preloaded
 * one-liner: on a busy machine the CPU-time ratio moves less than the wall-clock one, which is
 * the figure the bar is about. Each tool call is 12 lines (invoke, 10 stream
 * events, result) of about 320 bytes. The endpoint runs in a worker thread of this process: it
 * answers each request at once and decodes what it kept (with `tooltrace/testing`'s decoder)
 * only after the process exited, so neither pipeline waits on it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { build } from 'esbuild';
import { decodeTraceRequest } from '../src/testing/index.js';
import { journalText } from '../test/sidecar/journal-lines.js';

const CALLS = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const LINES = CALLS * 12;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
/** Where the compiled straightforward pipeline goes: under node_modules, so its imports resolve. */
const COMPILED = join(ROOT, 'node_modules', '.cache', 'tooltrace-bench', 'straightforward.mjs');
const USAGE_MARK = 'TOOLTRACE_BENCH_USAGE=';
/**
 * Preloaded into every child: reports on stderr as it exits its peak resident set size (KB) and
 * the CPU time it used (user + system, µs, all threads: the garbage collector's helpers too).
 */
const REPORT_USAGE = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('\\n${USAGE_MARK}'+u.maxRSS+','+(u.userCPUTime+u.systemCPUTime)+'\\n')})`;
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
type Protocol = (typeof PROTOCOLS)[number];

/** What the receiver worker is asked and answers. */
type Request =
  { id: number; kind: 'url' | 'clear' | 'close' } | { id: number; kind: 'wait'; spans: number };
interface Answer {
  id: number;
  url?: string;
  distinct?: number;
  error?: string;
}

/** The main thread's handle on the receiver worker. */
class ReceiverWorker {
  // The worker loads this same file through tsx, as the main thread was (workers do not
  // inherit the loader that `npx tsx` registered).
  readonly #worker = new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`,
    { eval: true },
  );
  #next = 0;
  readonly #pending = new Map<number, (answer: Answer) => void>();

  constructor() {
    this.#worker.on('message', (answer: Answer) => {
      this.#pending.get(answer.id)?.(answer);
      this.#pending.delete(answer.id);
    });
  }

  ask(request: Omit<Request, 'id'> & { spans?: number }): Promise<Answer> {
    const id = (this.#next += 1);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (answer) =>
        answer.error === undefined ? resolve(answer) : reject(new Error(answer.error)),
      );
      this.#worker.postMessage({ id, ...request });
    });
  }

  /** How many distinct `execute_tool` spans arrived since the last clear. */
  async expect(spans: number): Promise<number> {
    return (await this.ask({ kind: 'wait', spans })).distinct!;
  }
}

/** One timed child process. */
interface Run {
  seconds: number;
  maxRssKb: number;
  cpuSeconds: number;
}

/** The runs of one row of the table. */
class Row {
  readonly runs: Run[] = [];
  constructor(readonly name: string) {}

  get linesPerSecond(): number {
    return LINES / median(this.runs.map((run) => run.seconds));
  }

  get maxRssKb(): number {
    return Math.max(...this.runs.map((run) => run.maxRssKb));
  }

  get cpuSeconds(): number {
    return median(this.runs.map((run) => run.cpuSeconds));
  }
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  await compileStraightforward();
  const text = journalText({ calls: CALLS });
  const directory = mkdtempSync(join(tmpdir(), 'tooltrace-bench-'));
  const journal = join(directory, 'journal.jsonl');
  writeFileSync(journal, text);
  console.log(
    `sidecar bench: ${CALLS} tool calls, ${LINES} lines of ${(Buffer.byteLength(text) / LINES).toFixed(0)} bytes (${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB), ${ROUNDS} rounds, Node ${process.version}, load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const receiver = new ReceiverWorker();
  const url = (await receiver.ask({ kind: 'url' })).url!;

  const floor = new Row('JSON.parse floor (process)');
  const rows = new Map<Protocol, { plain: Row; sidecar: Row }>(
    PROTOCOLS.map((protocol) => [
      protocol,
      {
        plain: new Row(`straightforward ${protocol}`),
        sidecar: new Row(`tooltrace sidecar ${protocol}`),
      },
    ]),
  );
  for (let round = 0; round < ROUNDS; round += 1) {
    const said: string[] = [];
    for (const protocol of PROTOCOLS) {
      const { plain, sidecar } = rows.get(protocol)!;
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_METRICS_EXPORTER: 'none',
      };
      await receiver.ask({ kind: 'clear' });
      plain.runs.push(await timeChild([COMPILED, 'pipeline'], journal, env));
      await checkDelivered(receiver, plain.name);
      await receiver.ask({ kind: 'clear' });
      sidecar.runs.push(
        await timeChild([CLI, 'sidecar', '--stdin', '--status-interval', '0'], journal, env),
      );
      await checkDelivered(receiver, sidecar.name);
      said.push(
        `${protocol} ${(plain.runs[round]!.seconds / sidecar.runs[round]!.seconds).toFixed(2)}x`,
      );
    }
    floor.runs.push(await timeChild([COMPILED, 'floor'], journal, {}));
    console.log(
      `  round ${round + 1}: sidecar / straightforward ${said.join(', ')}; load ${loadavg()[0]!.toFixed(2)}`,
    );
  }
  await receiver.ask({ kind: 'close' });
  rmSync(directory, { recursive: true, force: true });

  console.log('');
  console.log(
    `${'process'.padEnd(34)}${'lines/s'.padStart(11)}${'calls/s'.padStart(10)}${'CPU s'.padStart(8)}${'peak RSS'.padStart(11)}  delivered`,
  );
  const print = (row: Row, delivered: string): void =>
    console.log(
      `${row.name.padEnd(34)}${format(row.linesPerSecond).padStart(11)}${format(row.linesPerSecond / 12).padStart(10)}${row.cpuSeconds.toFixed(2).padStart(8)}${`${(row.maxRssKb / 1024).toFixed(0)} MB`.padStart(11)}  ${delivered}`,
    );
  print(floor, '-');
  for (const { plain, sidecar } of rows.values()) {
    print(plain, `${CALLS}/${CALLS} execute_tool spans`);
    print(sidecar, `${CALLS}/${CALLS} execute_tool spans`);
  }
  console.log('');
  for (const [protocol, { plain, sidecar }] of rows) {
    // Each round's pair ran back to back, so its ratio saw the same load: its median is the figure.
    const perRound = median(
      sidecar.runs.map((run, round) => plain.runs[round]!.seconds / run.seconds),
    );
    console.log(
      `${protocol.padEnd(14)} sidecar / straightforward ${perRound.toFixed(2)}x, median of the rounds' ratios (bar 1.5, goal 2; of the rows' medians ${(sidecar.linesPerSecond / plain.linesPerSecond).toFixed(2)}x; in CPU time ${(plain.cpuSeconds / sidecar.cpuSeconds).toFixed(2)}x); sidecar / floor ${(sidecar.linesPerSecond / floor.linesPerSecond).toFixed(2)}x (goal 0.5); straightforward / floor ${(plain.linesPerSecond / floor.linesPerSecond).toFixed(2)}x`,
    );
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
}

/** Compiles `straightforward-pipeline.ts` to JavaScript, so its process runs no TS loader. */
async function compileStraightforward(): Promise<void> {
  mkdirSync(join(COMPILED, '..'), { recursive: true });
  await build({
    entryPoints: [join(ROOT, 'bench', 'straightforward-pipeline.ts')],
    outfile: COMPILED,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    bundle: false,
    logLevel: 'warning',
  });
}

/** Fails the bench unless every call arrived as an `execute_tool` span. */
async function checkDelivered(receiver: ReceiverWorker, name: string): Promise<void> {
  const distinct = await receiver.expect(CALLS);
  if (distinct !== CALLS) throw new Error(`${name}: ${distinct} of ${CALLS} spans arrived`);
}

/** Runs `node --import <rss reporter> ...args < input`, spawn to exit. */
async function timeChild(
  args: readonly string[],
  input: string,
  env: Record<string, string>,
): Promise<Run> {
  const stdin = openSync(input, 'r');
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', REPORT_USAGE, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: [stdin, 'inherit', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => (stderr += text));
  const [code] = (await once(child, 'exit')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  closeSync(stdin);
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}:\n${stderr}`);
  const mark = stderr.lastIndexOf(USAGE_MARK);
  const [maxRssKb = Number.NaN, cpuMicros = Number.NaN] =
    mark < 0
      ? []
      : stderr
          .slice(mark + USAGE_MARK.length)
          .split('\n', 1)[0]!
          .split(',')
          .map(Number);
  return { seconds, maxRssKb, cpuSeconds: cpuMicros / 1e6 };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function format(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

// Run last, once every declaration above exists.
if (!isMainThread) {
  // The receiver worker: takes every export request at once and keeps its bytes, decoding them
  // with the receiver's own decoder only when asked how many spans arrived. Decoding on arrival
  // made the receiver the slowest part: both pipelines then ran at its pace (about 116 k lines/s
  // at 1 M lines), and the table measured the receiver instead of them.
  const bodies: { body: Buffer; contentType: string }[] = [];
  const seen = new Set<string>();
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const contentType = incoming.headers['content-type'] ?? '';
      bodies.push({ body: Buffer.concat(chunks), contentType });
      const json = contentType.startsWith('application/json');
      response.writeHead(200, {
        'content-type': json ? 'application/json' : 'application/x-protobuf',
      });
      response.end(json ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const countArrived = (): number => {
    for (const { body, contentType } of bodies.splice(0)) {
      for (const span of decodeTraceRequest(body, contentType)) {
        if (span.name.startsWith('execute_tool ')) seen.add(span.spanId);
      }
    }
    return seen.size;
  };
  parentPort!.on('message', (request: Request) => {
    const answer = (fields: Omit<Answer, 'id'>) =>
      parentPort!.postMessage({ id: request.id, ...fields });
    if (request.kind === 'url') answer({ url });
    else if (request.kind === 'clear') {
      bodies.length = 0;
      seen.clear();
      answer({});
    } else if (request.kind === 'wait') {
      // The pipelines exit once their last export was answered: everything is here by now.
      answer({ distinct: countArrived() });
    } else {
      server.close(() => {
        answer({});
        parentPort!.close();
      });
    }
  });
} else {
  await main();
}
