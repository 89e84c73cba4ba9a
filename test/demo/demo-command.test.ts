import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeTraceRequest,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../src/testing/index.js';
import {
  childEnv,
  rowOf,
  runCli,
  SCENARIO_TOOLS,
  startCli,
  waterfallOf,
  type CliRun,
} from './cli-process.js';

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tooltrace-demo-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** The live log: the plain lines printed while the tools run (`+0.12s  name  what`). */
function liveLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => /^ *\+\d+\.\d\ds {2}/.test(line));
}

/**
 * The in-flight snapshots the demo says it exported. A run slower than the live interval (1 s,
 * on a loaded machine) exports some beside the trace's spans; a fast one none.
 */
function snapshotsOf(stdout: string): number {
  const said = /\n(\d+) in-flight updates? (?:was|were) exported/.exec(stdout);
  return said === null ? 0 : Number(said[1]);
}

/** The spans of a trace without its in-flight snapshots. */
function endedOnly(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  return spans.filter((span) => span.attributes['tooltrace.inflight'] !== true);
}

/** The spans of an `--out` file: OTLP JSON lines, one export request a line. */
async function readSpans(path: string): Promise<ReceivedSpan[]> {
  const text = (await readFile(path, 'utf8')).trimEnd();
  return text
    .split('\n')
    .flatMap((line) => decodeTraceRequest(Buffer.from(line), 'application/json'));
}

/** The spans that are not in-flight snapshots (a slow run adds some of long calls, on any side). */
function withoutSnapshots(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  return spans.filter((span) => span.attributes['tooltrace.inflight'] !== true);
}

/** Every span's name, ids and parent id: what must survive every path the spans take. */
function identities(spans: readonly ReceivedSpan[]): string[] {
  return spans
    .map((span) => `${span.name} ${span.traceId}/${span.spanId}<-${span.parentSpanId}`)
    .sort();
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The demo's trace: session, turn, two chats, eight tool calls, the sub-agent and its chat. */
const DEMO_SPANS = 14;

describe('tooltrace demo --fast', () => {
  let run: CliRun;
  let waterfall: string[];
  let outFile: string;

  beforeAll(async () => {
    outFile = join(directory, 'demo.json');
    run = await runCli(['demo', '--fast', '--out', outFile]);
    waterfall = waterfallOf(run.stdout);
  });

  it('exits 0 with nothing on stderr', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('logs every scenario tool while it runs', () => {
    const live = liveLines(run.stdout);
    for (const tool of SCENARIO_TOOLS) {
      expect(live.some((line) => line.includes(` ${tool}  started (`))).toBe(true);
    }
    expect(live.filter((line) => / (ok|failed|cancelled)(: |$)/.test(line))).toHaveLength(8);
  });

  it('draws one trace of the whole session with every scenario tool', () => {
    expect(waterfall[0]).toMatch(new RegExp(`^trace [0-9a-f]{32} {2}${DEMO_SPANS} spans {2}`));
    expect(waterfall).toHaveLength(DEMO_SPANS + 1);
    for (const tool of SCENARIO_TOOLS) expect(rowOf(waterfall, tool)).toBeDefined();
  });

  it('draws session → turn → chat and tool calls, the nested call and the sub-agent in place', () => {
    const names = waterfall
      .slice(1)
      .map((line) => /^ {2}((?:[├└]─ |│ {2}| {3})*\S+(?: \S+)?)/.exec(line)![1]);
    expect(names).toEqual([
      expect.stringMatching(/^session demo-[0-9a-f]{8}$/),
      '└─ invoke_agent planner',
      '   ├─ chat sim-planner',
      '   ├─ execute_tool write_report',
      '   ├─ execute_tool index_files',
      '   ├─ execute_tool fetch_prices',
      '   ├─ execute_tool slow_search',
      '   ├─ execute_tool plan_trip',
      '   │  └─ execute_tool lookup_weather',
      '   ├─ execute_tool research',
      '   │  └─ invoke_agent researcher',
      '   │     ├─ chat sim-small',
      '   │     └─ execute_tool summarize',
      '   └─ chat sim-planner',
    ]);
  });

  it('shows token counts and streamed chunks on chat rows', () => {
    const chats = waterfall.filter((line) => / chat sim-/.test(line));
    expect(chats).toHaveLength(3);
    for (const row of chats)
      expect(row).toMatch(/ \S+ in \/ \d+ out tokens, \d+ chunks, first after /);
  });

  it('marks the failed call ERROR with its message and the cancelled call CANCELLED', () => {
    expect(rowOf(waterfall, 'fetch_prices')).toMatch(
      / ERROR {2}.*"price feed returned HTTP 503 for market FRA"$/,
    );
    expect(rowOf(waterfall, 'slow_search')).toMatch(/ CANCELLED {2}/);
    expect(rowOf(waterfall, 'slow_search')).not.toContain('ERROR');
    for (const tool of ['write_report', 'index_files', 'plan_trip', 'lookup_weather']) {
      expect(rowOf(waterfall, tool)).toMatch(/ OK( {2}|$)/);
    }
    const live = liveLines(run.stdout);
    expect(live).toContainEqual(
      expect.stringMatching(
        / fetch_prices {2}failed: price feed returned HTTP 503 for market FRA$/,
      ),
    );
    expect(live).toContainEqual(expect.stringMatching(/ slow_search {2}cancelled: /));
  });

  it('shows the stream summary the spans carry', () => {
    expect(rowOf(waterfall, 'write_report')).toMatch(/ 4 partials \(289 B\), first after /);
    expect(rowOf(waterfall, 'index_files')).toMatch(/ 48 progress to 100%/);
  });

  it('prints a per-tool table from the metrics: every call counted once, the failed one as an error and the cancelled one not, as view does', () => {
    const start = run.stdout.indexOf('Per tool, from the metrics');
    expect(start).toBeGreaterThan(-1);
    const rows = run.stdout
      .slice(start)
      .split('\n')
      .filter((line) => /^ {2}[a-z_]+ +\d+ +\d+ /.test(line))
      .map((line) => line.trim().split(/\s+/).slice(0, 3));
    expect(rows.map(([tool]) => tool)).toEqual([...SCENARIO_TOOLS].sort());
    for (const [tool, calls, errors] of rows) {
      expect(calls).toBe('1');
      // tooltrace view's rule: failed calls are errors, cancelled ones are counted apart.
      expect(errors).toBe(tool === 'fetch_prices' ? '1' : '0');
    }
  });

  it('writes no escape codes when stdout is not a terminal', () => {
    expect(run.stdout).not.toContain('\x1b');
  });

  it('writes what was exported to --out as OTLP JSON that decodes into the whole trace', async () => {
    expect(run.stdout).toContain(
      `Wrote ${DEMO_SPANS + snapshotsOf(run.stdout)} spans as OTLP JSON to ${outFile}`,
    );
    const spans = endedOnly(await readSpans(outFile));
    expect(spans).toHaveLength(DEMO_SPANS);
    const tools = spans.filter((span) => span.name.startsWith('execute_tool '));
    expect(tools.map((span) => span.name.replace('execute_tool ', '')).sort()).toEqual(
      [...SCENARIO_TOOLS].sort(),
    );
    const traceId = /^trace ([0-9a-f]{32})/.exec(waterfall[0]!)![1];
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([traceId]));
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(DEMO_SPANS);
    const byName = new Map(spans.map((span) => [span.name, span]));
    expect(byName.get('execute_tool lookup_weather')?.parentSpanId).toBe(
      byName.get('execute_tool plan_trip')?.spanId,
    );
    expect(byName.get('invoke_agent researcher')?.parentSpanId).toBe(
      byName.get('execute_tool research')?.spanId,
    );
    expect(byName.get('execute_tool summarize')?.parentSpanId).toBe(
      byName.get('invoke_agent researcher')?.spanId,
    );
    const session = /session (demo-[0-9a-f]{8})/.exec(waterfall[1]!)![1];
    for (const span of spans) {
      expect(span.attributes['gen_ai.conversation.id']).toBe(session);
    }
  });

  it('writes no escape codes with --no-color either, and fits the waterfall in COLUMNS', async () => {
    const plain = await runCli(
      ['demo', '--fast', '--no-color'],
      childEnv({ FORCE_COLOR: '1', COLUMNS: '60' }),
    );
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('\x1b');
    const narrow = waterfallOf(plain.stdout);
    expect(narrow).toHaveLength(DEMO_SPANS + 1);
    for (const line of narrow) expect(line.length, line).toBeLessThanOrEqual(60);
    // Every row keeps its bar and its duration; what is cut ends in an ellipsis.
    for (const line of narrow.slice(1)) expect(line).toMatch(/█+ +\d[\d.]*(µs|ms|s)\b/);
    expect(narrow.some((line) => line.endsWith('…'))).toBe(true);
  });

  it('gives every run a trace of its own: no trace or span id of one run in the next', async () => {
    const againFile = join(directory, 'again.json');
    const again = await runCli(['demo', '--fast', '--out', againFile]);
    expect(again.code).toBe(0);
    const first = endedOnly(await readSpans(outFile));
    const second = endedOnly(await readSpans(againFile));

    expect(second).toHaveLength(DEMO_SPANS);
    const traceIds = new Set([...first, ...second].map((span) => span.traceId));
    expect(traceIds.size).toBe(2);
    const firstSpanIds = new Set(first.map((span) => span.spanId));
    expect(second.filter((span) => firstSpanIds.has(span.spanId))).toEqual([]);
    // A new session each run (a new conversation), its root span a new one too.
    const sessionOf = (spans: readonly ReceivedSpan[]) =>
      spans.find((span) => span.name.startsWith('session '))!.attributes['gen_ai.conversation.id'];
    expect(sessionOf(second)).not.toBe(sessionOf(first));
  });
});

describe('tooltrace demo with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(() => {
    receiver.setAvailable(true);
    receiver.clear();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('exports the same spans there and still draws the waterfall', async () => {
    const outFile = join(directory, 'exported.json');
    const run = await runCli(
      ['demo', '--fast', '--out', outFile],
      childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'demo-under-test' }),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`and to ${receiver.tracesUrl}`);
    const total = DEMO_SPANS + snapshotsOf(run.stdout);
    expect(run.stdout).toContain(`Exported ${total} spans to ${receiver.tracesUrl}.`);
    expect(waterfallOf(run.stdout)).toHaveLength(DEMO_SPANS + 1);
    const exported = await receiver.waitForSpans(total);
    expect(exported).toHaveLength(total);
    expect(exported[0]?.resource['service.name']).toBe('demo-under-test');
    expect(identities(exported)).toEqual(identities(await readSpans(outFile)));
  });

  it('still draws the waterfall when the endpoint refuses, and says so with exit code 1', async () => {
    receiver.setAvailable(false);
    const run = await runCli(
      ['demo', '--fast'],
      childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TIMEOUT: '500' }),
    );
    expect(waterfallOf(run.stdout)).toHaveLength(DEMO_SPANS + 1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^tooltrace demo: ${DEMO_SPANS + snapshotsOf(run.stdout)} spans were not exported to ${receiver.tracesUrl}: .+\\n$`,
      ),
    );
    expect(run.code).toBe(1);
  });

  it('honours OTEL_TRACES_EXPORTER: console prints each span after the drawing, and without otlp nothing goes to the endpoint', async () => {
    const run = await runCli(
      ['demo', '--fast'],
      childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'console' }),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain(`and to ${receiver.tracesUrl}`);
    const printed = run.stdout.split('The spans, as OTEL_TRACES_EXPORTER=console prints them:')[1];
    const heads = printed!.split('\n').filter((line) => / {2}trace=[0-9a-f]{32} span=/.test(line));
    expect(heads).toHaveLength(DEMO_SPANS);
    expect(heads.some((line) => line.startsWith('execute_tool plan_trip  '))).toBe(true);
    expect(receiver.requests).toEqual([]);

    const refused = await runCli(['demo', '--fast'], childEnv({ OTEL_TRACES_EXPORTER: 'jaeger' }));
    expect(refused.stderr).toMatch(
      /^tooltrace demo: OTEL_TRACES_EXPORTER: 'jaeger' is not an exporter the demo supports; accepted: otlp, console, none/,
    );
    expect(refused.code).toBe(2);
  });

  it('refuses a bad OTEL_EXPORTER_OTLP_PROTOCOL with exit code 2 before running', async () => {
    const run = await runCli(
      ['demo', '--fast'],
      childEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml',
      }),
    );
    expect(run.stderr).toMatch(/^tooltrace demo: OTLP protocol 'http\/xml' is not supported/);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
  });
});

describe('tooltrace demo --forward', () => {
  let receiver: OtlpReceiver;
  let sidecar: ChildProcess | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(() => {
    if (sidecar?.exitCode === null) sidecar.kill('SIGKILL');
    sidecar = undefined;
  });
  afterAll(async () => {
    await receiver.close();
  });

  /** Starts `tooltrace sidecar --listen 127.0.0.1:0` and resolves with the URL it prints. */
  async function startSidecar(
    extraArgs: readonly string[] = [],
  ): Promise<{ url: string; log: () => string }> {
    const child = startCli([
      'sidecar',
      ...extraArgs,
      '--listen',
      '127.0.0.1:0',
      '--otlp-endpoint',
      receiver.url,
      '--status-interval',
      '0',
      // The demo draws one trace per session; the sidecar must cut traces the same way.
      '--trace-by',
      'session',
    ]);
    sidecar = child;
    let log = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString('utf8');
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
        if (match !== null) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`sidecar exited with ${code}:\n${log}`)));
    });
    return { url, log: () => log };
  }

  it('sends the events to a sidecar process, which exports the same spans', async () => {
    const { url, log } = await startSidecar();
    const outFile = join(directory, 'forwarded.json');
    const run = await runCli(['demo', '--fast', '--forward', url, '--out', outFile]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`events go to the sidecar at ${url}`);
    expect(run.stdout).toMatch(new RegExp(`\\nForwarded \\d+ events to ${url}\\.\\n`));
    expect(waterfallOf(run.stdout)).toHaveLength(DEMO_SPANS + 1);

    const exited = once(sidecar!, 'exit');
    sidecar!.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code, log()).toBe(0);
    // The sidecar has exited: everything it exported is in. A slow run may add in-flight
    // snapshots of long calls, on either side (the demo's --out or the sidecar), which are not
    // the demo's spans.
    const exported = withoutSnapshots(receiver.spans);
    expect(exported).toHaveLength(DEMO_SPANS);
    expect(exported[0]?.resource['service.name']).toBe('tooltrace-sidecar');
    // Ids derive from the forwarded event ids, so the sidecar's trace is the demo's own.
    expect(identities(exported)).toEqual(identities(withoutSnapshots(await readSpans(outFile))));
  });

  it('refuses a --forward URL no send could use before running, with exit code 2', async () => {
    const run = await runCli(['demo', '--fast', '--forward', 'ftp://sidecar:4319']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "tooltrace demo: --forward: options.url must be an http:// or https:// URL, got 'ftp://sidecar:4319'\n",
    );
    expect(run.stdout).toBe('');
  });

  it('names a sidecar that is not there while the demo runs, and counts every event at the end', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await runCli(['demo', '--fast', '--forward', url]);

    expect(run.code).toBe(1);
    expect(waterfallOf(run.stdout)).toHaveLength(DEMO_SPANS + 1);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(
        `^tooltrace demo: --forward: cannot reach the sidecar at ${url}/v1/events: fetch failed: connect ECONNREFUSED .*; retrying$`,
      ),
    );
    const final =
      /^tooltrace demo: the sidecar did not take every event: (\d+) events, sent (\d+), refused (\d+), dropped (\d+), abandoned (\d+) \(gave up after 10 s\); last error: fetch failed: connect ECONNREFUSED /.exec(
        lines[1]!,
      );
    expect(final, lines[1]).not.toBeNull();
    const [total, sent, refused, dropped, abandoned] = final!.slice(1).map(Number);
    expect(abandoned).toBeGreaterThan(100);
    expect(sent! + refused! + dropped! + abandoned!).toBe(total);
  });

  it('tells its user, when the sidecar refuses the token, to check TOOLTRACE_TOKEN (the library options are not theirs)', async () => {
    const { url } = await startSidecar(['--token', 'the-sidecars-token']);
    const run = await runCli(
      ['demo', '--fast', '--forward', url],
      childEnv({ TOOLTRACE_TOKEN: 'a-wrong-token' }),
    );
    expect(run.code).toBe(1);
    const refusal = run.stderr.split('\n').find((line) => line.includes('HTTP 401'));
    expect(refusal).toMatch(
      /^tooltrace demo: --forward: the sidecar at .* refused \d+ events: HTTP 401: .* \(check TOOLTRACE_TOKEN: the demo sends it as its bearer token; it must be one the sidecar's --token takes\)$/,
    );
    expect(run.stderr).not.toContain('options.');
  });

  it('names why the sidecar did not take the events', async () => {
    const { url } = await startSidecar();
    // The right sidecar, a wrong path under it: every batch is refused with 404.
    const run = await runCli(['demo', '--fast', '--forward', `${url}/v1/events`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /the sidecar did not take every event: (\d+) events, sent 0, refused \1, dropped 0, abandoned 0; last error: HTTP 404: no route for POST \/v1\/events\/v1\/events$/m,
    );
  });
});
