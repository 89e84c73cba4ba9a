/**
 * How long `/healthz` and `/readyz` take to answer while the sidecar's HTTP intake takes 16 MiB
 * POST bodies, against the same probes while it is idle, in one run. The bar: every probe under
 * 100 ms (no intake step holds the event loop for more than about 20 ms).
 *
 * The sidecar is the built CLI (`--listen 127.0.0.1:0`), exporting to an OTLP endpoint in a
 * process of its own that takes every request and decodes nothing (so the probes' timing is not
 * the endpoint's work); the bodies are built before anything is timed, and the probes go out
 * every 10 ms from this process, whose own loop does nothing else but write the bodies out.
 *
 *   npm run build && npx tsx bench/healthz.bench.ts [posts] [nice]   (default: 4 bodies of 16 MiB)
 *
 * On a machine whose cores are shared with other busy processes, a CPU-bound sidecar is also
 * preempted for tens of milliseconds at a time, which no code of its own can prevent; `nice`
 * (for example `-10`, as root) runs the sidecar at that niceness to tell the two apart. The load
 * average is printed with the results.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
const POSTS = Number(process.argv[2] ?? 4);
const NICENESS = process.argv[3];
const BODY_BYTES = 16 * 1024 * 1024;
const PROBE_EVERY_MS = 10;
const TOKEN = 'bench-token';

/** One 16 MiB NDJSON body of tool calls (invoke, eight stream events, result), ids unique to `round`. */
function body(round: number): Buffer {
  const lines: string[] = [];
  let bytes = 0;
  let seq = 0;
  for (let call = 0; bytes < BODY_BYTES - 4096; call += 1) {
    const id = `r${round}c${call}`;
    const ts = (ms: number): string => new Date(Date.UTC(2026, 4, 1, 12) + ms).toISOString();
    const push = (type: string, payload: unknown, ms: number): void => {
      seq += 1;
      const text = JSON.stringify({
        seq,
        ts: ts(call * 10 + ms),
        type,
        event_id: `${id}-${seq}`.padEnd(32, '0'),
        session_id: `bench-${round}`,
        payload,
      });
      if (bytes + text.length + 1 > BODY_BYTES) return;
      lines.push(text);
      bytes += text.length + 1;
    };
    push('tool.invoke', { id, name: 'search', arguments: { query: `query ${id}` } }, 0);
    for (let sequence = 1; sequence <= 8; sequence += 1) {
      push(
        'tool.stream.partial',
        { tool_name: 'search', tool_id: id, sequence, payload: `partial ${sequence} of ${id}` },
        sequence,
      );
    }
    push('tool.result', { id, name: 'search', output: 'done' }, 9);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

function post(url: URL, bytes: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL('/v1/events', url),
      {
        method: 'POST',
        headers: {
          'content-type': 'application/x-ndjson',
          'content-length': String(bytes.length),
          authorization: `Bearer ${TOKEN}`,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(bytes);
  });
}

/** Milliseconds from sending `GET path` to the end of its answer. */
function probe(url: URL, path: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, url), { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(performance.now() - started));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Probes `/healthz` and `/readyz` in turn every 10 ms until `until` settles. */
async function probeWhile(url: URL, until: Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  let index = 0;
  const pending: Promise<void>[] = [];
  while (!done) {
    const path = index % 2 === 0 ? '/healthz' : '/readyz';
    index += 1;
    pending.push(probe(url, path).then((ms) => void times.push(ms)));
    await sleep(PROBE_EVERY_MS);
  }
  await Promise.all(pending);
  return times;
}

function summary(label: string, times: readonly number[]): string {
  const sorted = [...times].sort((left, right) => left - right);
  const at = (share: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
  const over = sorted.filter((ms) => ms > 100).length;
  return (
    `${label.padEnd(22)} ${String(sorted.length).padStart(4)} probes  p50 ${at(0.5).toFixed(1)} ms  ` +
    `p99 ${at(0.99).toFixed(1)} ms  max ${sorted.at(-1)!.toFixed(1)} ms  over 100 ms: ${over}`
  );
}

/** An OTLP/HTTP endpoint that answers every request 200 with an empty protobuf answer. */
const SINK = `
  const server = require('node:http').createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/x-protobuf' });
      response.end();
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;
const sink = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
sink.stdout.setEncoding('utf8');
const sinkPort = await new Promise<string>((resolve) =>
  sink.stdout.once('data', (text: string) => resolve(text.trim())),
);
/**
 * Preloaded into the sidecar (`node --require`): every 2 ms it looks at how long the event loop
 * took to come back, and for each wait over 20 ms appends to `LOOP_GAPS_FILE` the wait and the
 * CPU time the process used meanwhile. A wait spent on CPU is the sidecar's own work holding the
 * loop; a wait with little CPU is time the process was not running (other processes had the
 * cores).
 */
const LOOP_GAPS = `
const { appendFileSync } = require('node:fs');
const file = process.env.LOOP_GAPS_FILE;
let lastWall = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const waitMs = wall - lastWall;
  if (waitMs > 20) {
    const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
    appendFileSync(file, waitMs.toFixed(1) + ' ' + cpuMs.toFixed(1) + '\\n');
  }
  lastWall = wall;
  lastCpu = cpu;
}, 2).unref();
`;
const gapsFile = join(tmpdir(), `tooltrace-loop-gaps-${process.pid}.txt`);
const preload = join(tmpdir(), `tooltrace-loop-gaps-${process.pid}.cjs`);
await writeFile(preload, LOOP_GAPS);
const nodeArgs = ['--require', preload, CLI];
const sidecar = spawn(
  NICENESS === undefined ? process.execPath : 'nice',
  [
    ...(NICENESS === undefined ? [] : ['-n', NICENESS, process.execPath]),
    ...nodeArgs,
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
      LOOP_GAPS_FILE: gapsFile,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
      OTEL_METRICS_EXPORTER: 'none',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
let stderr = '';
sidecar.stderr.setEncoding('utf8');
const url = await new Promise<URL>((resolve, reject) => {
  sidecar.stderr.on('data', (text: string) => {
    stderr += text;
    const match = /listening on (http:\/\/\S+)/.exec(stderr);
    if (match !== null) resolve(new URL(match[1]!));
  });
  sidecar.once('exit', () => reject(new Error(`the sidecar exited:\n${stderr}`)));
});
try {
  const bodies = Array.from({ length: POSTS }, (_, round) => body(round));
  const idle = await probeWhile(url, sleep(1000));
  // Only the waits while bodies are taken: start-up (loading modules) is not the intake's.
  await rm(gapsFile, { force: true });
  const busy: number[] = [];
  const statuses: number[] = [];
  for (const bytes of bodies) {
    const sent = post(url, bytes).then((status) => void statuses.push(status));
    busy.push(...(await probeWhile(url, sent)));
    await sleep(200);
  }
  console.log(
    `${POSTS} POSTs of ${(bodies[0]!.length / 1024 / 1024).toFixed(1)} MiB, answered ${statuses.join(', ')}`,
  );
  console.log(
    `load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}, sidecar niceness ${NICENESS ?? 0}`,
  );
  console.log(summary('idle', idle));
  console.log(summary('during 16 MiB POSTs', busy));
  const gaps = (await readFile(gapsFile, 'utf8').catch(() => ''))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').map(Number) as [number, number]);
  // The CPU time counts every thread of the process (GC helpers too): an upper bound.
  const own = gaps.map(([wait, cpu]) => Math.min(wait, cpu)).sort((left, right) => right - left);
  const longestOwn = own[0] ?? 0;
  const starved = gaps.filter(([wait, cpu]) => wait > 100 && cpu < wait / 2).length;
  console.log(
    `event loop waits over 20 ms in the sidecar: ${gaps.length}; longest spent on its own CPU: ` +
      `${longestOwn.toFixed(1)} ms (next: ${own
        .slice(1, 5)
        .map((ms) => ms.toFixed(0))
        .join(', ')}); waits over 100 ms with the process mostly not running: ${starved}`,
  );
} finally {
  await rm(gapsFile, { force: true });
  await rm(preload, { force: true });
  sidecar.kill('SIGTERM');
  await new Promise((resolve) => sidecar.once('exit', resolve));
  sink.kill('SIGTERM');
}
