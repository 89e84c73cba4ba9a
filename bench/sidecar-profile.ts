/**
 * Where the sidecar's CPU goes: runs the built CLI (`node --cpu-prof dist/cli.js sidecar
 * --stdin`) on a generated journal into a receiver that accepts and discards every request, then
 * prints the functions with the most self time, grouped by function and file, with the share of
 * the whole profile and the run's wall-clock, CPU time and peak RSS.
 *
 *   npm run build && npx tsx bench/sidecar-profile.ts [calls] [protocol] [top]
 *
 * `calls` tool calls of 12 lines each (default 83 334: about 1 M lines); `protocol` is
 * `http/protobuf` (default) or `http/json`. The discarding receiver runs in this process (it
 * only counts bytes), so the profile is the sidecar's own work. The profile file is kept in
 * `node_modules/.cache/tooltrace-bench/` for a closer look in a profiler.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { journalText } from '../test/sidecar/journal-lines.js';

const CALLS = Number(process.argv[2] ?? 83_334);
const PROTOCOL = process.argv[3] ?? 'http/protobuf';
const TOP = Number(process.argv[4] ?? 25);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
const OUT = join(ROOT, 'node_modules', '.cache', 'tooltrace-bench');
const USAGE_MARK = 'TOOLTRACE_BENCH_USAGE=';
const REPORT_USAGE = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('\\n${USAGE_MARK}'+u.maxRSS+','+(u.userCPUTime+u.systemCPUTime)+'\\n')})`;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

mkdirSync(OUT, { recursive: true });
const journal = join(OUT, `profile-journal-${CALLS}.jsonl`);
writeFileSync(journal, journalText({ calls: CALLS }));

let received = 0;
const sink = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (received += chunk.length));
  request.on('end', () => {
    response.writeHead(200, {
      'content-type': PROTOCOL === 'http/json' ? 'application/json' : 'application/x-protobuf',
    });
    response.end(PROTOCOL === 'http/json' ? '{}' : '');
  });
});
sink.listen(0, '127.0.0.1');
await once(sink, 'listening');
const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const profileDirectory = join(OUT, `profile-${Date.now()}`);
const stdin = openSync(journal, 'r');
const started = performance.now();
const child = spawn(
  process.execPath,
  [
    '--cpu-prof',
    '--cpu-prof-dir',
    profileDirectory,
    '--import',
    REPORT_USAGE,
    CLI,
    'sidecar',
    '--stdin',
    '--status-interval',
    '0',
  ],
  {
    env: {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_PROTOCOL: PROTOCOL,
      OTEL_METRICS_EXPORTER: 'none',
    },
    stdio: [stdin, 'inherit', 'pipe'],
  },
);
let stderr = '';
child.stderr!.setEncoding('utf8');
child.stderr!.on('data', (text: string) => (stderr += text));
const [code] = (await once(child, 'exit')) as [number | null];
const seconds = (performance.now() - started) / 1000;
closeSync(stdin);
sink.close();
if (code !== 0) throw new Error(`the sidecar exited with ${code}:\n${stderr}`);
const mark = stderr.lastIndexOf(USAGE_MARK);
const [maxRssKb, cpuMicros] = stderr
  .slice(mark + USAGE_MARK.length)
  .split('\n', 1)[0]!
  .split(',')
  .map(Number);

const file = readdirSync(profileDirectory).find((name) => name.endsWith('.cpuprofile'))!;
const profile = JSON.parse(readFileSync(join(profileDirectory, file), 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map<string, number>();
let total = 0;
for (let index = 0; index < profile.samples.length; index += 1) {
  const node = byId.get(profile.samples[index]!)!;
  const delta = profile.timeDeltas[index] ?? 0;
  total += delta;
  const { functionName, url: source, lineNumber } = node.callFrame;
  const where = source === '' ? '' : ` ${source.replace(/^.*\/(dist|node_modules)\//, '$1/')}`;
  const key = `${functionName || '(anonymous)'}${where}${source === '' ? '' : `:${lineNumber + 1}`}`;
  selfMicros.set(key, (selfMicros.get(key) ?? 0) + delta);
}

const lines = CALLS * 12;
console.log(
  `sidecar profile: ${lines} lines, ${PROTOCOL}, Node ${process.version}: wall ${seconds.toFixed(2)} s, CPU ${(cpuMicros! / 1e6).toFixed(2)} s (${((cpuMicros! / lines) * 1000).toFixed(0)} ns/line), peak RSS ${(maxRssKb! / 1024).toFixed(0)} MB, ${(received / 1e6).toFixed(1)} MB sent`,
);
console.log(`profile: ${join(profileDirectory, file)}`);
console.log('');
console.log(`${'self %'.padStart(7)}${'self ms'.padStart(9)}  function`);
for (const [key, micros] of [...selfMicros].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
  console.log(
    `${((micros / total) * 100).toFixed(1).padStart(7)}${(micros / 1000).toFixed(0).padStart(9)}  ${key}`,
  );
}
