import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPace } from '../../src/demo/demo-pace.js';
import { runDemoAgent } from '../../src/demo/index.js';
import { EventBus } from '../../src/index.js';
import { forwardEvents } from '../../src/forward/index.js';
import { startOtlpReceiver } from '../../src/testing/index.js';
import { nexusJournal } from '../sidecar/nexus-journal.js';
import { startSidecar } from '../sidecar/sidecar-process.js';
import {
  childEnv,
  rowOf,
  runCli,
  SCENARIO_TOOLS,
  startCli,
  waterfallOf,
} from '../demo/cli-process.js';
import { journalText } from '../sidecar/journal-lines.js';

let directory: string;
/** The demo's own waterfall and its `--out` file, made once by a `tooltrace demo` process. */
let demoWaterfall: string[];
let otlpFile: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tooltrace-view-'));
  otlpFile = join(directory, 'demo.json');
  const demo = await runCli(['demo', '--fast', '--out', otlpFile]);
  expect(demo.code, demo.stderr).toBe(0);
  demoWaterfall = waterfallOf(demo.stdout);
  // The whole session: session, turn, two chats, eight tool calls, the sub-agent and its chat.
  expect(demoWaterfall).toHaveLength(15);
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Writes `text` to a new file in the test directory and returns its path. */
async function file(name: string, text: string | Buffer): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, text);
  return path;
}

/** The label column of each row: the span name with its tree connectors. */
function labels(waterfall: readonly string[]): string[] {
  return waterfall
    .filter((line) => line.startsWith('  '))
    .map((line) => /^ {2}((?:[├└]─ |│ {2}| {3})*\S+ \S+)/.exec(line)![1]!);
}

/** Lines written in Nexus's Go journal format: Go payload field names and no `event_id`. */
const NEXUS_JOURNAL = [
  {
    seq: 1,
    ts: '2026-05-01T14:00:00.000000000+02:00',
    type: 'tool.invoke',
    source: 'nexus.agent.react',
    payload: {
      _schema_version: 1,
      ID: 'call_read',
      Name: 'read_file',
      Arguments: { path: 'a.txt' },
      TurnID: 't1',
      ParentCallID: '',
      Sequence: 0,
    },
  },
  {
    seq: 2,
    ts: '2026-05-01T14:00:00.250000000+02:00',
    type: 'tool.result',
    source: 'nexus.tools',
    parent_seq: 1,
    payload: {
      _schema_version: 1,
      ID: 'call_read',
      Name: 'read_file',
      Output: 'hello',
      Error: '',
      OutputFile: '',
      OutputData: null,
      OutputStructured: null,
      TurnID: 't1',
    },
  },
  {
    seq: 3,
    ts: '2026-05-01T14:00:00.300000000+02:00',
    type: 'tool.invoke',
    source: 'nexus.agent.react',
    payload: { ID: 'call_run', Name: 'run_tests', Arguments: null, TurnID: 't1' },
  },
  {
    seq: 4,
    ts: '2026-05-01T14:00:01.300000000+02:00',
    type: 'tool.result',
    source: 'nexus.tools',
    parent_seq: 3,
    payload: {
      ID: 'call_run',
      Name: 'run_tests',
      Output: '',
      Error: '3 tests failed',
      TurnID: 't1',
    },
  },
].map((line) => JSON.stringify(line));

describe('tooltrace view', () => {
  it('draws every call of a journal longer than the stock batch queue (3,000 calls, 36,000 lines)', async () => {
    const journal = await file('long.jsonl', journalText({ calls: 3000 }));
    const view = await runCli(['view', journal, '--trace-by', 'session']);
    expect(view.stderr).toBe('');
    expect(view.code).toBe(0);
    const waterfall = waterfallOf(view.stdout);
    expect(waterfall[0]).toMatch(/ 3000 spans /);
    expect(waterfall.filter((line) => line.includes('execute_tool search'))).toHaveLength(3000);
  });

  it('draws the trace ids the sidecar exports for the same journal, by default and with --trace-by', async () => {
    const journal = await file(
      'two-sessions.ndjson',
      nexusJournal('a', true) + nexusJournal('b', true, 100),
    );
    const traceIdsDrawn = async (args: string[]): Promise<string[]> => {
      const run = await runCli(['view', journal, ...args]);
      expect(run.code, run.stderr).toBe(0);
      return waterfallOf(run.stdout)
        .filter((line) => line.startsWith('trace '))
        .map((line) => line.split(' ')[1]!)
        .sort();
    };
    const traceIdsExported = async (args: string[]): Promise<string[]> => {
      const receiver = await startOtlpReceiver();
      try {
        const sidecar = startSidecar(['--stdin', '--status-interval', '0', ...args], {
          input: await readFile(journal),
          env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: 'none' },
        });
        expect((await sidecar.exited).code).toBe(0);
        return [...new Set(receiver.spans.map((span) => span.traceId))].sort();
      } finally {
        await receiver.close();
      }
    };
    const byTurn = await traceIdsDrawn([]);
    expect(byTurn).toHaveLength(2);
    expect(byTurn).toEqual(await traceIdsExported([]));
    const bySession = await traceIdsDrawn(['--trace-by', 'session']);
    expect(bySession).toEqual(await traceIdsExported(['--trace-by', 'session']));
    expect(bySession).not.toEqual(byTurn);
  });

  it('refuses a --trace-by it does not know, naming the ones it does', async () => {
    const run = await runCli(['view', otlpFile, '--trace-by', 'turn']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--trace-by must be causal-root, session or call, got 'turn'");
  });

  it('escapes control characters from the file, so a name or a bad line cannot drive the terminal', async () => {
    const hostile = '\u001b]0;PWNED\u0007\u001b[2J';
    const journal = await file(
      'hostile.jsonl',
      `${JSON.stringify({
        ts: '2026-05-01T12:00:00Z',
        type: 'tool.invoke',
        event_id: 'e1',
        payload: { id: 'tc_1', name: hostile, arguments: {} },
      })}\n${JSON.stringify({
        ts: '2026-05-01T12:00:01Z',
        type: 'tool.result',
        event_id: 'e2',
        parent_id: 'e1',
        payload: { id: 'tc_1', name: hostile, error: `failed ${hostile}` },
      })}\n{"ts": 5, "type": "x\u001b[2J"}\n`,
    );
    const view = await runCli(['view', journal]);
    expect(view.code).toBe(0);
    expect(view.stdout).not.toContain('\u001b');
    expect(view.stderr).not.toContain('\u001b');
    expect(view.stdout).toContain('execute_tool \\x1b]0;PWNED\\x07\\x1b[2J');
    expect(view.stderr).toContain('line 3: skipped');

    const garbage = await runCli([
      'view',
      await file('garbage.bin', Buffer.from([0x1b, 0x5b, 0x32, 0x4a, 0x0a])),
    ]);
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).not.toContain('\u001b');
    expect(garbage.stderr).toContain('\\x1b[2J');
  });

  it('ends quietly with 0 when its reader leaves early (`tooltrace view journal | head`)', async () => {
    const journal = await file('long-again.jsonl', journalText({ calls: 3000 }));
    const child = startCli(['view', journal]);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // Like `head -1`: one chunk of the waterfall, then the pipe is closed.
    child.stdout!.once('data', () => child.stdout!.destroy());
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  describe('an OTLP JSON file', () => {
    it("draws the demo's --out file as the same waterfall the demo drew", async () => {
      const run = await runCli(['view', otlpFile]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(waterfallOf(run.stdout)).toEqual(demoWaterfall);
      expect(run.stdout).not.toContain('\x1b');
    });

    it('fits 80 columns when its output is no terminal and COLUMNS is unset', async () => {
      const run = await runCli(['view', otlpFile], childEnv({ COLUMNS: '' }));
      const waterfall = waterfallOf(run.stdout);
      expect(waterfall).toHaveLength(demoWaterfall.length);
      expect(Math.max(...demoWaterfall.map((line) => line.length))).toBeGreaterThan(80);
      for (const line of waterfall) expect(line.length, line).toBeLessThanOrEqual(80);
      // Every row keeps its bar: the names and the summary give way first.
      expect(waterfall.slice(1).every((line) => line.includes('█'))).toBe(true);
    });

    it('draws a pretty-printed (multi-line) OTLP JSON document the same way', async () => {
      const pretty = JSON.stringify(JSON.parse(await readFile(otlpFile, 'utf8')), null, 2);
      const run = await runCli(['view', await file('pretty.json', `${pretty}\n`)]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(waterfallOf(run.stdout)).toEqual(demoWaterfall);
    });

    it('reads a file that starts with a UTF-8 byte order mark', async () => {
      const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), await readFile(otlpFile)]);
      const run = await runCli(['view', await file('bom.json', bytes)]);
      expect(run.stderr).toBe('');
      expect(waterfallOf(run.stdout)).toEqual(demoWaterfall);
    });

    it('joins one request per line, as the Collector file exporter writes them', async () => {
      const request = JSON.parse(await readFile(otlpFile, 'utf8')) as {
        resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
      };
      const spans = request.resourceSpans[0]!.scopeSpans[0]!.spans;
      const half = (part: unknown[]): string => {
        const copy = structuredClone(request);
        copy.resourceSpans[0]!.scopeSpans[0]!.spans = part;
        return JSON.stringify(copy);
      };
      const text = `${half(spans.slice(0, 3))}\n\n${half(spans.slice(3))}\n`;
      const run = await runCli(['view', await file('per-line.json', text)]);
      expect(run.code).toBe(0);
      expect(waterfallOf(run.stdout)).toEqual(demoWaterfall);
    });

    it('skips a torn line of OTLP JSON lines, naming it on stderr, and draws the rest, as for a journal', async () => {
      const request = JSON.parse(await readFile(otlpFile, 'utf8')) as {
        resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
      };
      const spans = request.resourceSpans[0]!.scopeSpans[0]!.spans;
      const part = (from: number, to?: number): string => {
        const copy = structuredClone(request);
        copy.resourceSpans[0]!.scopeSpans[0]!.spans = spans.slice(from, to);
        return JSON.stringify(copy);
      };
      const torn = part(3).slice(0, 80);
      const text = `${part(0, 3)}\n${torn}\n{"resourceSpans": 3}\n${part(3)}\n`;
      const path = await file('torn-lines.jsonl', text);
      const run = await runCli(['view', path]);
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(
        new RegExp(`^tooltrace view: ${path}: line 2: skipped \\(not_json\\): `),
      );
      expect(run.stderr).toMatch(
        new RegExp(`\ntooltrace view: ${path}: line 3: skipped \\(wrong_type\\): .*resourceSpans`),
      );
      expect(waterfallOf(run.stdout)).toEqual(demoWaterfall);

      const nothing = await runCli(['view', await file('all-torn.jsonl', `${torn}\n`)]);
      expect(nothing.code).toBe(2);
      expect(nothing.stderr).toMatch(/: line 1: the line is not JSON: /);
    });
  });

  describe('an NDJSON event journal', () => {
    it('replays a journal written by forwardEvents and draws every call in its tree', async () => {
      const path = join(directory, 'events.ndjson');
      const bus = new EventBus();
      const forwarder = forwardEvents(bus, { file: path });
      // In the demo run's session (each run has a new one), so the two waterfalls compare.
      const session = /session (demo-[0-9a-f]{8})/.exec(demoWaterfall[1]!)![1]!;
      await runDemoAgent(bus, demoPace(0.02), session);
      expect(await forwarder.close()).toBe(true);
      expect(forwarder.stats().dropped).toBe(0);

      // The demo draws its session as one trace: so does view, asked to.
      const run = await runCli(['view', path, '--trace-by', 'session']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const waterfall = waterfallOf(run.stdout);
      expect(waterfall[0]).toMatch(/^trace [0-9a-f]{32} {2}14 spans /);
      for (const tool of SCENARIO_TOOLS) expect(rowOf(waterfall, tool)).toBeDefined();
      expect(labels(waterfall)).toEqual(labels(demoWaterfall));
      expect(rowOf(waterfall, 'fetch_prices')).toMatch(
        / ERROR {2}.*"price feed returned HTTP 503 for market FRA"$/,
      );
      expect(rowOf(waterfall, 'slow_search')).toMatch(/ CANCELLED /);
      expect(run.stdout).not.toContain('\x1b');
    });

    it('draws a Nexus journal with Go payload names and no event_id', async () => {
      const run = await runCli([
        'view',
        await file('nexus.ndjson', `${NEXUS_JOURNAL.join('\n')}\n`),
      ]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const waterfall = waterfallOf(run.stdout);
      expect(rowOf(waterfall, 'read_file')).toMatch(/ 250ms {2}OK$/);
      expect(rowOf(waterfall, 'run_tests')).toMatch(/ 1\.00s {2}ERROR .*"3 tests failed"$/);
    });

    it('reports bad lines with their numbers and still draws the rest', async () => {
      const lines = [
        NEXUS_JOURNAL[0],
        NEXUS_JOURNAL[1],
        'not json at all',
        NEXUS_JOURNAL[2],
        '{"seq":9,"type":"tool.result"}',
        NEXUS_JOURNAL[3],
      ];
      const run = await runCli(['view', await file('bad-lines.ndjson', `${lines.join('\n')}\n`)]);
      expect(run.stderr).toMatch(/: line 3: skipped \(not_json\): /);
      expect(run.stderr).toMatch(/: line 5: skipped \(missing_field\): ts is missing/);
      expect(run.stderr.trim().split('\n')).toHaveLength(2);
      expect(run.code).toBe(0);
      const waterfall = waterfallOf(run.stdout);
      expect(rowOf(waterfall, 'read_file')).toBeDefined();
      expect(rowOf(waterfall, 'run_tests')).toBeDefined();
    });

    it('reads a journal whose first line is torn', async () => {
      const torn = NEXUS_JOURNAL[0]!.slice(40);
      const text = `${[torn, ...NEXUS_JOURNAL.slice(1)].join('\n')}\n`;
      const run = await runCli(['view', await file('torn.ndjson', text)]);
      expect(run.stderr).toMatch(/: line 1: skipped \(not_json\): /);
      expect(run.code).toBe(0);
      expect(rowOf(waterfallOf(run.stdout), 'run_tests')).toBeDefined();
    });

    it('ignores OTEL_EXPORTER_OTLP_ENDPOINT: looking at a file exports nothing', async () => {
      const receiver = await startOtlpReceiver();
      try {
        const path = await file('quiet.ndjson', `${NEXUS_JOURNAL.join('\n')}\n`);
        const run = await runCli(
          ['view', path],
          childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }),
        );
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        expect(rowOf(waterfallOf(run.stdout), 'run_tests')).toBeDefined();
        expect(receiver.requests).toEqual([]);
      } finally {
        await receiver.close();
      }
    });
  });

  describe('a file it cannot draw', () => {
    it('names a missing file, with exit code 2', async () => {
      const path = join(directory, 'no-such-file.json');
      const run = await runCli(['view', path]);
      expect(run.stderr).toBe(`tooltrace view: cannot read ${path}: no such file\n`);
      expect(run.stdout).toBe('');
      expect(run.code).toBe(2);
    });

    it('refuses a directory, with exit code 2', async () => {
      const path = join(directory, 'a-directory');
      await mkdir(path);
      const run = await runCli(['view', path]);
      expect(run.stderr).toBe(`tooltrace view: ${path} is not a file\n`);
      expect(run.code).toBe(2);
    });

    it('refuses an empty or blank file, with exit code 2', async () => {
      for (const [name, text] of [
        ['empty.json', ''],
        ['blank.json', '\n  \n\n'],
      ] as const) {
        const path = await file(name, text);
        const run = await runCli(['view', path]);
        expect(run.stderr).toBe(`tooltrace view: ${path} is empty\n`);
        expect(run.code).toBe(2);
      }
    });

    it('names line 1 and why for a file of neither kind, with exit code 2', async () => {
      const text = await file('notes.txt', 'hello world\nsecond line\n');
      const run = await runCli(['view', text]);
      expect(run.stderr).toMatch(
        new RegExp(
          `^tooltrace view: ${text} is neither OTLP JSON nor an NDJSON event journal: line 1: the line is not JSON: `,
        ),
      );
      expect(run.code).toBe(2);

      const object = await file('object.json', '{"name": "not an event"}\n');
      const objectRun = await runCli(['view', object]);
      expect(objectRun.stderr).toBe(
        `tooltrace view: ${object} is neither OTLP JSON nor an NDJSON event journal: line 1: type is missing\n`,
      );
      expect(objectRun.code).toBe(2);
    });

    it('draws a Nexus session without any tool call: its turn and a chat row per answer with tokens', async () => {
      const run = await runCli(['view', await file('quiet.ndjson', nexusJournal('quiet', false))]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const waterfall = waterfallOf(run.stdout);
      // A trace per turn, as the sidecar exports it.
      expect(waterfall).toHaveLength(3);
      expect(waterfall[1]).toMatch(/^ {2}invoke_agent /);
      expect(waterfall[2]).toMatch(/^ {2}└─ chat claude-sonnet /);
      expect(waterfall.at(-1)).toMatch(/ 240 in \/ 12 out tokens/);
    });

    it('says so when a journal holds no tool calls, with exit code 1', async () => {
      const line = JSON.stringify({ ts: '2026-05-01T12:00:00Z', type: 'agent.turn', payload: {} });
      const path = await file('no-calls.ndjson', `${line}\n`);
      const run = await runCli(['view', path]);
      expect(run.stderr).toBe(`tooltrace view: ${path} holds no spans or tool calls\n`);
      expect(run.code).toBe(1);
    });
  });
});
