/**
 * The sidecar under sustained load, in the manner of the OpenTelemetry Collector's testbed: the
 * built CLI (`tooltrace sidecar --listen 127.0.0.1:0`) takes `POST /v1/events` at a fixed rate
 * of events per second from a fixed number of concurrent tool calls, for a fixed time, and
 * exports to a real OTLP/HTTP receiver. Every second the sidecar's CPU time and resident set
 * size are read from `/proc/<pid>`; the report gives, per rate:
 *
 * - the rate actually sent (the generator catches up when it falls behind, and says so);
 * - the sidecar's CPU % after warm-up (100 % is one core) and CPU % per 1 k events/s;
 * - its RSS after warm-up, at the end, and the slope of a least-squares line through the
 *   samples after warm-up (MB per minute), which must be flat; beside it the V8 heap in use right
 *   after a full collection, every 15 s (a preloaded `gc()`, about 0.2 % of a core), whose slope
 *   tells a leak from a heap still growing into its limits;
 * - loss: after the load stops and the sidecar is stopped (SIGTERM: it exports what it holds),
 *   every call sent must have arrived as exactly one `execute_tool` span.
 *
 *   npm run build && npx tsx bench/load.bench.ts [seconds] [rates] [calls]
 *   npx tsx bench/load.bench.ts 300 5000,20000 200     # the defaults: 5 minutes at each rate
 *
 * Each call is 12 events (invoke, 10 stream events, result) of about 320 bytes, as in
 * `bench:sidecar`; the generator keeps `calls` of them open, advancing them round robin, and
 * posts what is due every 50 ms. The receiver decodes in a worker thread of this process, so its
 * work is not the sidecar's. Linux only (`/proc`).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { startOtlpReceiver } from '../src/testing/index.js';
import { journalLines } from '../test/sidecar/journal-lines.js';

const SECONDS = Number(process.argv[2] ?? 300);
const RATES = (process.argv[3] ?? '5000,20000').split(',').map(Number);
const CONCURRENT_CALLS = Number(process.argv[4] ?? 200);
const TICK_MS = 50;
/**
 * The most lines posted in one request, fresh or resent: well under the sidecar's body limit,
 * however far behind the generator fell while the sidecar refused.
 */
const MAX_REQUEST_LINES = 5_000;
/** Samples before this share of the run are warm-up: start-up, JIT, the first exports. */
const WARM_UP_SHARE = 0.2;
const TOKEN = 'load-bench-token';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
const HEAP_MARK = 'TOOLTRACE_BENCH_HEAP=';
/** Preloaded into the sidecar (with `--expose-gc`): the heap in use after a full collection. */
const HEAP_SAMPLER = `data:text/javascript,setInterval(()=>{globalThis.gc();process.stderr.write('${HEAP_MARK}'+process.memoryUsage().heapUsed+'\\n')},15000).unref()`;
/** Clock ticks per second of `/proc/<pid>/stat`'s utime and stime (`getconf CLK_TCK`). */
const CLOCK_TICKS = 100;

/** One sample of the sidecar process. */
interface Sample {
  seconds: number;
  cpuSeconds: number;
  rssMb: number;
  sentEvents: number;
}

/** What the receiver worker is asked and answers. */
type WorkerRequest = { id: number; kind: 'url' | 'count' | 'clear' | 'close' };
interface WorkerAnswer {
  id: number;
  url?: string;
  distinct?: number;
  spans?: number;
}

/** The main thread's handle on the receiver worker. */
class ReceiverWorker {
  // The worker loads this file through tsx, as the main thread was.
  readonly #worker = new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`,
    { eval: true },
  );
  #next = 0;
  readonly #pending = new Map<number, (answer: WorkerAnswer) => void>();

  constructor() {
    this.#worker.on('message', (answer: WorkerAnswer) => {
      this.#pending.get(answer.id)?.(answer);
      this.#pending.delete(answer.id);
    });
  }

  ask(kind: WorkerRequest['kind']): Promise<WorkerAnswer> {
    const id = (this.#next += 1);
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#worker.postMessage({ id, kind });
    });
  }
}

/** Keeps `concurrent` tool calls open and hands out their next lines, round robin. */
class CallMix {
  #nextCall = 0;
  #completed = 0;
  readonly #open: string[][] = [];
  #turn = 0;

  constructor(
    readonly concurrent: number,
    readonly firstCall: number,
  ) {
    for (let index = 0; index < concurrent; index += 1) this.#open.push(this.#newCall());
  }

  /** Calls whose result line was handed out. */
  get completed(): number {
    return this.#completed;
  }

  /** The next `count` lines, one from each open call in turn. */
  take(count: number): string[] {
    const lines: string[] = [];
    for (let taken = 0; taken < count; taken += 1) {
      const slot = this.#turn;
      this.#turn = (this.#turn + 1) % this.concurrent;
      const call = this.#open[slot]!;
      lines.push(call.shift()!);
      if (call.length === 0) {
        this.#completed += 1;
        this.#open[slot] = this.#newCall();
      }
    }
    return lines;
  }

  #newCall(): string[] {
    const index = this.firstCall + this.#nextCall;
    this.#nextCall += 1;
    return journalLines({ calls: 1, firstCall: index, sessionId: `load-${this.firstCall}` });
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** POSTs one NDJSON body; resolves with the status. */
function post(url: URL, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL('/v1/events', url),
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/x-ndjson',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Reads the process's CPU seconds (user + system) and RSS (MB) from `/proc`. */
function usageOf(pid: number): { cpuSeconds: number; rssMb: number } {
  // Fields after the command name, which is in parentheses and may contain spaces.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return { cpuSeconds, rssMb: rssKb / 1024 };
}

/** Slope of the least-squares line through (x, y), per unit of x. */
function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const point of points) {
    numerator += (point.x - meanX) * (point.y - meanY);
    denominator += (point.x - meanX) ** 2;
  }
  return denominator === 0 ? 0 : numerator / denominator;
}

/** Starts the built sidecar listening on a free port; resolves once it says where. */
async function startSidecar(otlpUrl: string): Promise<{
  url: URL;
  pid: number;
  heapMb: () => number[];
  stop: () => Promise<number | null>;
}> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      HEAP_SAMPLER,
      CLI,
      'sidecar',
      '--listen',
      '127.0.0.1:0',
      '--token',
      TOKEN,
      '--status-interval',
      '0',
    ],
    {
      env: {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_METRICS_EXPORTER: 'none',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  const url = await new Promise<URL>((resolve, reject) => {
    child.stderr.on('data', (text: string) => {
      stderr += text;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match !== null) resolve(new URL(match[1]!));
    });
    child.once('exit', (code) => reject(new Error(`the sidecar exited with ${code}:\n${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    url,
    pid: child.pid!,
    heapMb: () =>
      [...stderr.matchAll(new RegExp(`${HEAP_MARK}(\\d+)`, 'g'))].map(
        (match) => Number(match[1]) / 1024 / 1024,
      ),
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) console.log(`  the sidecar exited with ${code}:\n${stderr}`);
      return code;
    },
  };
}

/** One run at `rate` events/s; prints its row and returns whether it met the bar. */
async function runAt(rate: number, receiver: ReceiverWorker, otlpUrl: string): Promise<boolean> {
  await receiver.ask('clear');
  const sidecar = await startSidecar(otlpUrl);
  const mix = new CallMix(CONCURRENT_CALLS, rate * 1000);
  const samples: Sample[] = [];
  const statuses = new Map<number, number>();
  let sent = 0;
  let inFlight = 0;
  let behindTicks = 0;
  const started = performance.now();
  const base = usageOf(sidecar.pid);
  let nextSample = 1;
  const pending = new Set<Promise<void>>();
  const retry: string[] = [];
  for (;;) {
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed >= SECONDS) break;
    if (elapsed >= nextSample) {
      const usage = usageOf(sidecar.pid);
      samples.push({
        seconds: elapsed,
        cpuSeconds: usage.cpuSeconds - base.cpuSeconds,
        rssMb: usage.rssMb,
        sentEvents: sent,
      });
      nextSample += 1;
    }
    const due = Math.floor(elapsed * rate) - sent;
    if (due > 0 && inFlight < 4) {
      // Lines refused with 429 go first; a request holds at most MAX_REQUEST_LINES (a backlog
      // posted whole would grow past the body limit and be refused for ever); the sidecar
      // recognizes a resent line by its event id.
      const fresh = retry.length === 0;
      const lines = fresh
        ? mix.take(Math.min(due, MAX_REQUEST_LINES))
        : retry.splice(0, MAX_REQUEST_LINES);
      if (fresh) sent += lines.length;
      inFlight += 1;
      const requeue = (): void => {
        for (const line of lines) retry.push(line);
      };
      const done = post(sidecar.url, `${lines.join('\n')}\n`).then((status) => {
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status !== 200) requeue();
      }, requeue);
      const tracked = done.finally(() => {
        inFlight -= 1;
        pending.delete(tracked);
      });
      pending.add(tracked);
    } else if (due > rate) {
      behindTicks += 1;
    }
    await sleep(TICK_MS);
  }
  await Promise.all(pending);
  while (retry.length > 0) {
    const lines = retry.splice(0, MAX_REQUEST_LINES);
    const status = await post(sidecar.url, `${lines.join('\n')}\n`).catch(() => 0);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (status !== 200) {
      retry.unshift(...lines);
      await sleep(200);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  // One heap sample every 15 s from start: those after warm-up.
  const heap = sidecar.heapMb().filter((_, index) => (index + 1) * 15 >= SECONDS * WARM_UP_SHARE);
  const code = await sidecar.stop();
  // Calls cut by the end of the load are still open: only completed calls count.
  const completed = mix.completed;
  let distinct = 0;
  for (let waited = 0; waited < 30; waited += 1) {
    distinct = (await receiver.ask('count')).distinct!;
    if (distinct >= completed) break;
    await sleep(1000);
  }

  const steady = samples.filter((sample) => sample.seconds >= SECONDS * WARM_UP_SHARE);
  const first = steady[0]!;
  const last = steady.at(-1)!;
  const cpuPercent = ((last.cpuSeconds - first.cpuSeconds) / (last.seconds - first.seconds)) * 100;
  const achieved = (last.sentEvents - first.sentEvents) / (last.seconds - first.seconds);
  const rssSlope = slope(steady.map((sample) => ({ x: sample.seconds / 60, y: sample.rssMb })));
  const heapSlope = slope(heap.map((mb, index) => ({ x: (index * 15) / 60, y: mb })));
  // Flat: over the steady part of the run, the fitted line rises less than 5 % of the heap (at
  // least 2 MB), and RSS less than 5 % of itself (at least 8 MB).
  const steadyMinutes = (SECONDS * (1 - WARM_UP_SHARE)) / 60;
  // A falling line (memory given back after warm-up) is no growth.
  const flat =
    rssSlope * steadyMinutes < Math.max(8, first.rssMb * 0.05) &&
    heapSlope * steadyMinutes < Math.max(2, (heap[0] ?? 0) * 0.05);
  const lost = completed - Math.min(distinct, completed);
  console.log(
    `${format(rate).padStart(7)} ev/s  sent ${format(achieved).padStart(7)} ev/s  CPU ${cpuPercent.toFixed(1).padStart(5)} %  ` +
      `${((cpuPercent / achieved) * 1000).toFixed(2).padStart(5)} % per 1k ev/s  ` +
      `RSS ${first.rssMb.toFixed(0)} → ${last.rssMb.toFixed(0)} MB, slope ${rssSlope.toFixed(2)} MB/min; heap after GC ${(heap[0] ?? 0).toFixed(1)} → ${(heap.at(-1) ?? 0).toFixed(1)} MB, slope ${heapSlope.toFixed(2)} MB/min (${flat ? 'flat' : 'GROWING'})  ` +
      `calls ${completed}, delivered ${Math.min(distinct, completed)}, lost ${lost}  ` +
      `answers ${[...statuses].map(([status, count]) => `${status}×${count}`).join(' ')}` +
      `${behindTicks > 0 ? `  generator behind for ${behindTicks} ticks` : ''}  (${seconds.toFixed(0)} s, exit ${code})`,
  );
  return flat && lost === 0 && code === 0;
}

function format(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

async function main(): Promise<void> {
  console.log(
    `load bench: ${SECONDS} s at each of ${RATES.map(format).join(', ')} events/s from ${CONCURRENT_CALLS} concurrent calls (12 events each), http/protobuf, Node ${process.version}, load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const receiver = new ReceiverWorker();
  const otlpUrl = (await receiver.ask('url')).url!;
  let met = true;
  for (const rate of RATES) met = (await runAt(rate, receiver, otlpUrl)) && met;
  await receiver.ask('close');
  agent.destroy();
  console.log(
    `${met ? 'bar met' : 'BAR MISSED'}: RSS flat after warm-up and nothing lost at every rate; load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  if (!met) process.exitCode = 1;
}

// Run last, once every declaration above exists.
if (!isMainThread) {
  // The receiver worker: the real test receiver, counting distinct execute_tool spans and
  // dropping what it decoded, so five minutes of load do not fill this process.
  const receiver = await startOtlpReceiver();
  const seen = new Set<string>();
  let spans = 0;
  const drain = (): void => {
    for (const span of receiver.spans) {
      // Calls still open at SIGTERM go out as shutdown snapshots: not counted as delivered calls.
      if (
        span.name.startsWith('execute_tool ') &&
        span.attributes['tooltrace.end_reason'] !== 'shutdown'
      ) {
        seen.add(span.spanId);
        spans += 1;
      }
    }
    receiver.clear();
  };
  const timer = setInterval(drain, 500);
  parentPort!.on('message', (message: WorkerRequest) => {
    const answer = (fields: Omit<WorkerAnswer, 'id'>) =>
      parentPort!.postMessage({ id: message.id, ...fields });
    if (message.kind === 'url') answer({ url: receiver.url });
    else if (message.kind === 'count') {
      drain();
      answer({ distinct: seen.size, spans });
    } else if (message.kind === 'clear') {
      drain();
      seen.clear();
      spans = 0;
      answer({});
    } else {
      clearInterval(timer);
      void receiver.close().then(() => {
        answer({});
        parentPort!.close();
      });
    }
  });
} else {
  await main();
}
