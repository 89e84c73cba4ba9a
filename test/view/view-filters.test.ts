import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { readJournalSpans } from '../../src/view/read-journal-spans.js';

let directory: string;
let journalPath: string;
let journal: string;

/** One call of the test journal: its session (and trace), tool, duration and whether it failed. */
interface Call {
  session: string;
  tool: string;
  milliseconds: number;
  error?: string;
}

/** Thirty sessions of one call each (thirty traces, more than a 24-row screen). */
const CALLS: Call[] = Array.from({ length: 30 }, (_, index) => ({
  session: `s${index}`,
  tool: index % 3 === 0 ? 'fetch' : 'search',
  // Distinct durations: s29 is the slowest, s28 next.
  milliseconds: 10 + index,
  ...(index % 10 === 5 ? { error: `HTTP 503 on call ${index}` } : {}),
}));

/** A Nexus-style journal (Go names, no event ids) of `calls`, a second apart. */
function journalOf(calls: readonly Call[]): string {
  const lines: string[] = [];
  calls.forEach((call, index) => {
    const start = Date.UTC(2026, 4, 1, 12, 0, index);
    const base = { source: 'nexus.tools', session_id: call.session };
    lines.push(
      JSON.stringify({
        ...base,
        seq: index * 2 + 1,
        ts: new Date(start).toISOString(),
        type: 'tool.invoke',
        payload: { ID: `tc_${index}`, Name: call.tool, Arguments: {} },
      }),
      JSON.stringify({
        ...base,
        seq: index * 2 + 2,
        ts: new Date(start + call.milliseconds).toISOString(),
        type: 'tool.result',
        payload: { ID: `tc_${index}`, Name: call.tool, Output: 'ok', Error: call.error ?? '' },
      }),
    );
  });
  return `${lines.join('\n')}\n`;
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tooltrace-filters-'));
  journalPath = join(directory, 'journal.ndjson');
  journal = journalOf(CALLS);
  await writeFile(journalPath, journal);
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** `tooltrace view` with `args`, run in this process with 24 rows and wide columns. */
async function view(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = new PassThrough().on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const err = new PassThrough().on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const previous = { lines: process.env.LINES, columns: process.env.COLUMNS };
  process.env.LINES = '24';
  process.env.COLUMNS = '200';
  try {
    const code = await runCli(['view', ...args], { stdout: out, stderr: err });
    return { code, stdout, stderr };
  } finally {
    for (const [name, value] of [
      ['LINES', previous.lines],
      ['COLUMNS', previous.columns],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The trace ids of the waterfall blocks drawn. */
function tracesDrawn(stdout: string): string[] {
  return [...stdout.matchAll(/^trace ([0-9a-f]{32}) /gm)].map((match) => match[1]!);
}

/** Trace id of each call, by session, as view's own replay makes them. */
async function traceOfSession(): Promise<Map<string, string>> {
  const { spans } = await readJournalSpans([Buffer.from(journal)]);
  return new Map(
    spans.map((span) => [String(span.attributes['gen_ai.conversation.id']), span.traceId]),
  );
}

describe('tooltrace view on more than a screen of traces', () => {
  it('prints a summary instead: counts, the per-tool table, the slowest and failed calls with their trace ids', async () => {
    const traces = await traceOfSession();
    const run = await view(journalPath);
    expect(run.code).toBe(0);
    expect(tracesDrawn(run.stdout)).toEqual([]);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('30 traces, 30 spans, 30 tool calls: 3 failed, 0 cancelled');
    expect(run.stdout).toMatch(/tool\s+calls\s+errors\s+p50\s+p95\s+first partial/);
    // fetch: calls 0, 3, …, 27 (10 to 37 ms), call 15 failed; search: the other 20, 5 and 25 failed.
    expect(run.stdout).toMatch(/ fetch\s+10\s+1\s+22ms\s+37ms\s+—/);
    expect(run.stdout).toMatch(/ search\s+20\s+2\s+24ms\s+38ms\s+—/);
    expect(run.stdout).toContain(`39ms  search            trace ${traces.get('s29')}\n`);
    expect(run.stdout).toContain(`trace ${traces.get('s15')}  "HTTP 503 on call 15"`);
    expect(run.stdout).toContain('--all draws every one');
  });

  it('draws every trace after the summary with --all', async () => {
    const run = await view(journalPath, '--all');
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith('30 traces,')).toBe(true);
    expect(tracesDrawn(run.stdout)).toHaveLength(30);
  });
});

describe('tooltrace view filters', () => {
  it('--trace draws that trace only', async () => {
    const traces = await traceOfSession();
    const run = await view(journalPath, '--trace', traces.get('s7')!.toUpperCase());
    expect(run.code).toBe(0);
    expect(tracesDrawn(run.stdout)).toEqual([traces.get('s7')]);
  });

  it('--session draws the traces of that session', async () => {
    const traces = await traceOfSession();
    const run = await view(journalPath, '--session', 's12');
    expect(tracesDrawn(run.stdout)).toEqual([traces.get('s12')]);
  });

  it('--errors draws the traces with a failed call', async () => {
    const traces = await traceOfSession();
    const run = await view(journalPath, '--errors');
    expect(run.code).toBe(0);
    expect(tracesDrawn(run.stdout).sort()).toEqual(
      ['s5', 's15', 's25'].map((session) => traces.get(session)).sort(),
    );
    expect(run.stdout).toContain('"HTTP 503 on call 25"');
  });

  it('--tool and --slowest together draw the traces of the slowest calls of that tool', async () => {
    const traces = await traceOfSession();
    const run = await view(journalPath, '--tool', 'fetch', '--slowest', '2');
    expect(tracesDrawn(run.stdout).sort()).toEqual([traces.get('s27'), traces.get('s24')].sort());
  });

  it('says so with exit code 1 when nothing matches', async () => {
    const run = await view(journalPath, '--tool', 'nope', '--errors');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `tooltrace view: ${journalPath}: no trace matches --tool nope --errors\n`,
    );
  });

  it.each([
    [
      ['--trace', 'abc'],
      "tooltrace view: --trace takes a trace id of 32 hex digits, not all zero, got 'abc'",
    ],
    [['--slowest', '0'], "tooltrace view: --slowest takes a whole number from 1 to 1000, got '0'"],
    [
      ['--slowest', '2.5'],
      "tooltrace view: --slowest takes a whole number from 1 to 1000, got '2.5'",
    ],
    [['--session', ''], "tooltrace view: --session takes a session id, got ''"],
    [['--tool', ' '], "tooltrace view: --tool takes a tool name, got ' '"],
    [['--errors=yes'], 'tooltrace view: --errors takes no value (tooltrace view --help)'],
    [['--slowest'], 'tooltrace view: --slowest needs a value (tooltrace view --help)'],
  ])('refuses %j in one line naming the flag, with exit code 2', async (args, message) => {
    const run = await view(journalPath, ...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`${message}\n`);
    expect(run.stdout).toBe('');
  });
});
