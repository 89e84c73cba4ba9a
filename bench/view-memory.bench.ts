/**
 * Peak resident memory of `tooltrace view` on a journal of about 100 MB and one of about 1 GB,
 * side by side in one run, summarised (the default for more traces than a screen) and drawn with
 * `--all` (up to 20,000 spans held): the bar is that peak memory stays flat as the file grows,
 * bounded by the summary's and the sidecar pipeline's indexes and the spans held for drawing
 * rather than by the size of the file. The journals are written to a
 * temporary directory under /tmp (a session per turn: a model answer, three tool calls with
 * eight stream events each, a second answer; event ids and parent ids as `forwardEvents` writes
 * them) and deleted at the end.
 *
 *   npm run build && npx tsx bench/view-memory.bench.ts [megabytes...]   (default: 100 1000)
 *
 * Peak RSS is the child's `VmHWM` (Linux), read from /proc every 20 ms until it exits.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
const SIZES_MB = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [100, 1000];
const NOON_MS = Date.UTC(2026, 4, 1, 12);

/** Writes sessions until the file holds `megabytes` MB; resolves with its size and lines. */
async function writeJournal(
  path: string,
  megabytes: number,
): Promise<{ bytes: number; lines: number }> {
  const out = createWriteStream(path);
  const target = megabytes * 1024 * 1024;
  let bytes = 0;
  let lines = 0;
  let seq = 0;
  let id = 0;
  const hex = (): string => (++id).toString(16).padStart(32, '0');
  for (let session = 0; bytes < target; session += 1) {
    const batch: string[] = [];
    const sessionId = `session-${session}`;
    let ms = session * 2_000;
    const line = (type: string, parentId: string, payload: unknown): string => {
      const eventId = hex();
      seq += 1;
      ms += 3;
      batch.push(
        JSON.stringify({
          seq,
          ts: new Date(NOON_MS + ms).toISOString(),
          type,
          event_id: eventId,
          source: 'bench.agent',
          parent_id: parentId,
          session_id: sessionId,
          agent_id: 'agent',
          depth: 0,
          payload,
        }),
      );
      return eventId;
    };
    line('io.session.start', '', { session_id: sessionId });
    const turn = line('agent.turn.start', '', { turnId: 't1' });
    const ask = line('llm.request', turn, { requestId: 'r1', turnId: 't1', model: 'bench-model' });
    const answer = line('llm.response', ask, {
      requestId: 'r1',
      turnId: 't1',
      model: 'bench-model',
      usage: { inputTokens: 200, outputTokens: 30 },
      toolCalls: [{ id: 'tc_1' }, { id: 'tc_2' }, { id: 'tc_3' }],
    });
    for (const call of ['tc_1', 'tc_2', 'tc_3']) {
      const invoke = line('tool.invoke', answer, {
        id: call,
        name: 'search',
        arguments: { query: `query ${session} ${call}` },
        turnId: 't1',
      });
      for (let sequence = 1; sequence <= 8; sequence += 1) {
        line(sequence % 2 === 0 ? 'tool.stream.partial' : 'tool.stream.progress', invoke, {
          tool_name: 'search',
          tool_id: call,
          turn_id: 't1',
          sequence,
          progress: sequence / 8,
          payload: `partial result ${sequence} of call ${call} in session ${session}`,
        });
      }
      line('tool.result', invoke, { id: call, name: 'search', output: 'done', turnId: 't1' });
    }
    line('llm.response', turn, { turnId: 't1', model: 'bench-model', finishReason: 'end_turn' });
    line('agent.turn.end', turn, { turnId: 't1' });
    const text = `${batch.join('\n')}\n`;
    bytes += Buffer.byteLength(text);
    lines += batch.length;
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { bytes, lines };
}

/** Runs `tooltrace view ...args path`, output discarded; its peak RSS in MB, seconds, stderr. */
async function view(
  path: string,
  args: readonly string[],
): Promise<{ peakMb: number; seconds: number; stderr: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'view', ...args, path], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => (stderr += text));
  let peakKb = 0;
  const poll = setInterval(() => {
    void readFile(`/proc/${child.pid}/status`, 'utf8')
      .then((status) => {
        const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
        if (kb > peakKb) peakKb = kb;
      })
      .catch(() => undefined);
  }, 20);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(poll);
  if (code !== 0) throw new Error(`tooltrace view exited with ${code}:\n${stderr}`);
  return { peakMb: peakKb / 1024, seconds: (performance.now() - started) / 1000, stderr };
}

const MODES = [
  { label: 'summary', args: [] },
  { label: '--all  ', args: ['--all'] },
] as const;

const directory = await mkdtemp(join(tmpdir(), 'tooltrace-view-bench-'));
try {
  const results = new Map<string, { megabytes: number; peakMb: number }[]>();
  for (const megabytes of SIZES_MB) {
    const path = join(directory, `journal-${megabytes}mb.ndjson`);
    const written = await writeJournal(path, megabytes);
    const size = (await stat(path)).size / 1024 / 1024;
    console.log(
      `${size.toFixed(0).padStart(5)} MB journal, ${written.lines.toLocaleString('en')} lines:`,
    );
    for (const mode of MODES) {
      const { peakMb, seconds, stderr } = await view(path, mode.args);
      const list = results.get(mode.label) ?? [];
      list.push({ megabytes: size, peakMb });
      results.set(mode.label, list);
      console.log(
        `  ${mode.label}  peak RSS ${peakMb.toFixed(0).padStart(4)} MB, ${seconds.toFixed(1)} s`,
      );
      for (const line of stderr.trim().split('\n').filter(Boolean)) console.log(`      ${line}`);
    }
    await rm(path);
  }
  for (const [label, list] of results) {
    if (list.length < 2) continue;
    const [small, large] = [list[0]!, list.at(-1)!];
    console.log(
      `${label.trim()}: file ${(large.megabytes / small.megabytes).toFixed(1)}x larger, peak RSS ${(large.peakMb / small.peakMb).toFixed(2)}x`,
    );
  }
} finally {
  await rm(directory, { recursive: true, force: true });
}
