import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runView } from '../../src/view/run-view.js';
import { journalText } from '../sidecar/journal-lines.js';
import { delegateJournal, nexusJournal, plannerJournal } from '../sidecar/nexus-journal.js';
import { TEN_LINE_JOURNAL } from './malformed-journal.js';

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tooltrace-malformed-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Runs `tooltrace view` in this process on `path`; what it wrote and its exit code. */
async function view(path: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = new PassThrough().on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const err = new PassThrough().on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await runView(path, { stdout: out, stderr: err, env: { COLUMNS: '200' } });
  return { code, stdout, stderr };
}

/** A small deterministic generator, so that every mutation can be made again from its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ODD_VALUES: unknown[] = [
  null,
  {},
  [],
  0,
  -1,
  1e308,
  '',
  'x',
  true,
  'tc_1',
  [1, 2],
  '2026-13-45T99:99:99Z',
  '\u001b[2J',
];

/** `value` with one field somewhere inside it removed or replaced by an odd value. */
function mutateValue(value: unknown, next: () => number, depth = 0): unknown {
  const odd = (): unknown => ODD_VALUES[Math.floor(next() * ODD_VALUES.length)];
  if (value === null || typeof value !== 'object') return odd();
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 0) return odd();
  const key = keys[Math.floor(next() * keys.length)]!;
  const choice = next();
  if (choice < 0.25) delete record[key];
  else if (choice < 0.6 || depth > 3) record[key] = odd();
  else record[key] = mutateValue(record[key], next, depth + 1);
  return record;
}

/** `journal` with one to six lines mutated, cut, dropped, repeated, swapped or prefixed with junk. */
function mutate(journal: string, seed: number): string {
  const next = generator(seed);
  const lines = journal.split('\n').filter((line) => line !== '');
  const count = 1 + Math.floor(next() * 6);
  for (let index = 0; index < count; index += 1) {
    const at = Math.floor(next() * lines.length);
    const choice = next();
    const line = lines[at]!;
    if (choice < 0.5) {
      try {
        lines[at] = JSON.stringify(mutateValue(JSON.parse(line), next));
      } catch {
        lines[at] = `${line}}`;
      }
    } else if (choice < 0.6) lines[at] = line.slice(0, Math.floor(next() * line.length));
    else if (choice < 0.7) lines.splice(at, 1);
    else if (choice < 0.8) lines.splice(at, 0, lines[Math.floor(next() * lines.length)]!);
    else if (choice < 0.9) {
      const other = Math.floor(next() * lines.length);
      [lines[at], lines[other]] = [lines[other]!, line];
    } else lines[at] = `\u0000junk${line}`;
  }
  return `${lines.join('\n')}\n`;
}

describe('tooltrace view on a malformed journal', () => {
  it("draws what the issue's ten lines hold, names the three bad ones, and exits 0", async () => {
    const path = join(directory, 'ten.ndjson');
    await writeFile(path, TEN_LINE_JOURNAL);
    const run = await view(path);
    expect(run.code).toBe(0);
    expect(run.stderr.trim().split('\n')).toEqual([
      `tooltrace view: ${path}: line 4: skipped (missing_field): ts is missing`,
      `tooltrace view: ${path}: line 5: skipped (wrong_type): ts must be an RFC 3339 timestamp string, got an object`,
      `tooltrace view: ${path}: line 6: skipped (missing_field): type is missing`,
    ]);
    const rows = run.stdout.split('\n').filter((line) => line.startsWith('  '));
    expect(rows.map((row) => row.trim().split(/\s{2,}/)[0])).toEqual([
      'invoke_agent',
      '├─ chat',
      '├─ chat',
      '└─ execute_tool grep',
    ]);
    expect(rows[3]).toMatch(/ERROR .*"boom"/);
  });

  it('ends every one of 300 seeded mutations of real journals with 0, 1 or 2 and one-line messages, never a throw', async () => {
    const journals = [
      nexusJournal('s1', true),
      nexusJournal('s2', false),
      plannerJournal(),
      delegateJournal(),
      journalText({ calls: 5, nested: true }),
      journalText({ calls: 4, withoutEventIds: true, leaveLastOpen: true }),
    ];
    const path = join(directory, 'mutated.ndjson');
    const codes = new Map<number, number>();
    for (let seed = 1; seed <= 300; seed += 1) {
      await writeFile(path, mutate(journals[seed % journals.length]!, seed));
      const run = await view(path);
      codes.set(run.code, (codes.get(run.code) ?? 0) + 1);
      expect([0, 1, 2], `seed ${seed}`).toContain(run.code);
      for (const line of run.stderr.split('\n').filter((text) => text !== '')) {
        expect(line, `seed ${seed}`).toMatch(/^tooltrace view: /);
      }
      if (run.code === 0) expect(run.stdout, `seed ${seed}`).toMatch(/^trace [0-9a-f]{32} /);
    }
    // Most mutations leave something to draw.
    expect(codes.get(0)).toBeGreaterThan(250);
  });

  it('says in one line, with exit code 2, when reading fails half-way', async () => {
    // A "regular file" whose read fails with EIO: a disk error, as far as view can tell.
    const run = await view('/proc/self/mem');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^tooltrace view: \/proc\/self\/mem: [^\n]*\n$/);
  });
});
