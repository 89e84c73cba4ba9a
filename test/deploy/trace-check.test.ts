import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { normalizeId, spansOfOtlpJson } from '../../scripts/compose-smoke/otlp-json-spans.js';
import { DEFAULT_SERVICE, runTraceCheck } from '../../scripts/compose-smoke/check-trace.js';
import { DEMO_TRACE } from '../../scripts/compose-smoke/trace-expectation.js';
import { checkTraceShape } from '../../scripts/compose-smoke/trace-shape.js';
import { loadCompose, serviceNamed } from './compose-file.js';
import { REPO_ROOT } from './repo-files.js';
import {
  serviceOf,
  startJaegerStandIn,
  startTempoStandIn,
  type BackendStandIn,
  type ResourceSpansJson,
  type SpanJson,
} from './trace-backend-stand-ins.js';

/** The service the compose sidecar exports the demo's spans under. */
const COMPOSE_SERVICE = serviceNamed(loadCompose(), 'sidecar').environment.OTEL_SERVICE_NAME!;

/** Runs the real `tooltrace demo --fast --out FILE` and returns what it exported, as the sidecar would name it. */
function runDemo(directory: string): Promise<ResourceSpansJson[]> {
  const out = join(directory, 'demo.json');
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('OTEL_') && !name.startsWith('TOOLTRACE_'))
      env[name] = value;
  }
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'demo', '--fast', '--no-color', '--out', out],
      { cwd: REPO_ROOT, env, timeout: 60_000 },
      (error, _stdout, stderr) => {
        if (error !== null)
          return reject(new Error(`tooltrace demo failed: ${stderr}`, { cause: error }));
        const document = JSON.parse(readFileSync(out, 'utf8')) as {
          resourceSpans: ResourceSpansJson[];
        };
        resolve(document.resourceSpans.map((resource) => renamed(resource, COMPOSE_SERVICE)));
      },
    );
  });
}

function renamed(resource: ResourceSpansJson, service: string): ResourceSpansJson {
  const attributes = (resource.resource?.attributes ?? []).filter(
    (attribute) => attribute.key !== 'service.name',
  );
  return {
    ...resource,
    resource: {
      attributes: [{ key: 'service.name', value: { stringValue: service } }, ...attributes],
    },
  };
}

function allSpans(trace: readonly ResourceSpansJson[]): SpanJson[] {
  return trace.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
}

function attribute(span: SpanJson, key: string): unknown {
  const value = span.attributes?.find((candidate) => candidate.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
}

/** A copy of the trace with `change` applied to the final span of `tool`'s call. */
function changeCall(
  trace: readonly ResourceSpansJson[],
  tool: string,
  change: (span: SpanJson) => SpanJson | undefined,
): ResourceSpansJson[] {
  return trace.map((resource) => ({
    ...resource,
    scopeSpans: resource.scopeSpans.map((scope) => ({
      ...scope,
      spans: scope.spans.flatMap((span) => {
        if (
          attribute(span, 'gen_ai.tool.name') !== tool ||
          attribute(span, 'tooltrace.inflight') === true
        )
          return [span];
        const changed = change(structuredClone(span));
        return changed === undefined ? [] : [changed];
      }),
    })),
  }));
}

/** A copy with extra spans appended to the first scope. */
function withSpans(
  trace: readonly ResourceSpansJson[],
  extra: readonly SpanJson[],
): ResourceSpansJson[] {
  const [first, ...rest] = structuredClone([...trace]);
  first!.scopeSpans[0]!.spans.push(...extra);
  return [first!, ...rest];
}

function hexId(bytes: number, seed: number): string {
  return seed.toString(16).padStart(bytes * 2, 'a');
}

class Output extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

let demo: ResourceSpansJson[];
let directory: string;
let jaeger: BackendStandIn;
let tempo: BackendStandIn;
const since = new Date(Date.now() - 60_000).toISOString();

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'trace-check-'));
  demo = await runDemo(directory);
});

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

beforeEach(async () => {
  jaeger = await startJaegerStandIn();
  tempo = await startTempoStandIn();
});

afterEach(async () => {
  await jaeger.close();
  await tempo.close();
});

/** Runs check-trace against both stand-ins; waits between attempts are recorded, not slept. */
async function check(
  extraArgs: string[] = [],
): Promise<{ code: number; out: string; err: string; waits: number[] }> {
  const stdout = new Output();
  const stderr = new Output();
  const waits: number[] = [];
  const code = await runTraceCheck(
    [
      '--jaeger',
      jaeger.url,
      '--tempo',
      tempo.url,
      '--since',
      since,
      '--timeout',
      '0',
      ...extraArgs,
    ],
    {
      stdout,
      stderr,
      wait: (milliseconds) => {
        waits.push(milliseconds);
        return Promise.resolve();
      },
    },
  );
  return { code, out: stdout.text, err: stderr.text, waits };
}

function storeEverywhere(trace: readonly ResourceSpansJson[]): void {
  jaeger.store(trace);
  tempo.store(trace);
}

describe('check-trace (scripts/compose-smoke)', () => {
  describe('the demo expectation', () => {
    it('describes what the real demo exports: every call, its outcome and its caller', () => {
      const spans = spansOfOtlpJson({ resourceSpans: demo }, 'demo --out');
      const report = checkTraceShape(spans, DEMO_TRACE);
      expect(report.problems).toEqual([]);
      expect(report.calls.map((call) => call.tool).sort()).toEqual(
        DEMO_TRACE.calls.map((call) => call.tool).sort(),
      );
      expect(
        report.calls.filter((call) => call.outcome === 'error').map((call) => call.tool),
      ).toEqual(['fetch_prices']);
      expect(
        report.calls.filter((call) => call.outcome === 'cancelled').map((call) => call.tool),
      ).toEqual(['slow_search']);
    });

    it('looks for the service name the compose sidecar exports under', () => {
      expect(DEFAULT_SERVICE).toBe(COMPOSE_SERVICE);
      expect(new Set(demo.map(serviceOf))).toEqual(new Set([COMPOSE_SERVICE]));
    });
  });

  describe('against backends holding the demo trace', () => {
    it('passes, printing every call it found in Jaeger and in Tempo', async () => {
      storeEverywhere(demo);
      const result = await check();
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(result.out).toMatch(/Jaeger \(http:\/\/127\.0\.0\.1:\d+\), after 1 try:/);
      expect(result.out).toMatch(/Tempo \(http:\/\/127\.0\.0\.1:\d+\), after 1 try:/);
      expect(result.out).toMatch(/fetch_prices\s+ERROR\s+"price feed returned HTTP 503/);
      expect(result.out).toMatch(/slow_search\s+CANCELLED/);
      expect(result.out).toMatch(/lookup_weather\s+OK\s+under plan_trip/);
      expect(result.out).toMatch(/summarize\s+OK\s+under research/);
      expect(result.out.match(/OK the demo agent's turn has the expected shape/g)).toHaveLength(2);
      expect(result.out).toContain('PASS: Jaeger and Tempo hold');
    });

    it("asks each backend's documented query API for the compose service in the run's window", async () => {
      storeEverywhere(demo);
      await check();
      const jaegerQuery = jaeger.requests[0]!;
      expect(jaegerQuery.path).toBe('/api/v3/traces');
      expect(jaegerQuery.query.get('query.service_name')).toBe(COMPOSE_SERVICE);
      expect(jaegerQuery.query.get('query.start_time_min')).toBe(since);
      const [search, byId] = tempo.requests;
      expect(search!.path).toBe('/api/search');
      expect(search!.query.get('q')).toBe(`{ resource.service.name = "${COMPOSE_SERVICE}" }`);
      expect(Number(search!.query.get('start'))).toBe(Math.floor(Date.parse(since) / 1000));
      // Tempo's search drops the id's leading zeros; the check asks for it at its full 32 hex
      // digits, which Tempo reads as the same id.
      const traceId = allSpans(demo)[0]!.traceId;
      expect(byId!.path).toBe(`/api/traces/${traceId}`);
    });

    it('tolerates agent, chat and in-flight snapshot spans around the calls', async () => {
      const traceId = allSpans(demo)[0]!.traceId;
      const turn = hexId(8, 1);
      const subAgent = hexId(8, 2);
      const start = allSpans(demo)[0]!.startTimeUnixNano;
      const span = (
        spanId: string,
        name: string,
        parentSpanId: string,
        attributes: Record<string, unknown>,
      ): SpanJson => ({
        traceId,
        spanId,
        parentSpanId,
        name,
        kind: 1,
        startTimeUnixNano: start,
        endTimeUnixNano: start,
        attributes: Object.entries(attributes).map(([key, value]) => ({
          key,
          value: typeof value === 'boolean' ? { boolValue: value } : { stringValue: String(value) },
        })),
        status: { code: 0 },
      });
      const research = allSpans(demo).find(
        (candidate) => attribute(candidate, 'gen_ai.tool.name') === 'research',
      )!;
      // Parentless calls (if any) become children of a turn; summarize moves one agent span deeper.
      let trace: ResourceSpansJson[] = demo.map((resource) => ({
        ...resource,
        scopeSpans: resource.scopeSpans.map((scope) => ({
          ...scope,
          spans: scope.spans.map((candidate) => ({
            ...candidate,
            parentSpanId:
              attribute(candidate, 'gen_ai.tool.name') === 'summarize'
                ? subAgent
                : (candidate.parentSpanId ?? '') === ''
                  ? turn
                  : candidate.parentSpanId,
          })),
        })),
      }));
      trace = withSpans(trace, [
        span(turn, 'invoke_agent planner', '', { 'gen_ai.operation.name': 'invoke_agent' }),
        span(hexId(8, 3), 'chat demo-model', turn, { 'gen_ai.operation.name': 'chat' }),
        span(subAgent, 'invoke_agent researcher', research.spanId, {
          'gen_ai.operation.name': 'invoke_agent',
        }),
        span(hexId(8, 4), 'execute_tool index_files (in flight)', turn, {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'index_files',
          'tooltrace.inflight': true,
        }),
      ]);
      storeEverywhere(trace);
      const result = await check();
      expect(result.code).toBe(0);
      const spanCount = allSpans(demo).length + 4;
      expect(result.out).toContain(`${spanCount} spans, 8 execute_tool calls`);
      expect(result.out).toMatch(/summarize\s+OK\s+under research\n/);
    });

    it('keeps asking until the trace is there, pausing --interval between attempts', async () => {
      let answered = 0;
      const stdout = new Output();
      const code = await runTraceCheck(
        ['--jaeger', jaeger.url, '--since', since, '--timeout', '6', '--interval', '2'],
        {
          stdout,
          stderr: new Output(),
          wait: (milliseconds) => {
            answered += 1;
            if (answered === 2) jaeger.store(demo);
            expect(milliseconds).toBe(2000);
            return Promise.resolve();
          },
        },
      );
      expect(code).toBe(0);
      expect(stdout.text).toContain('after 3 tries');
      expect(jaeger.requests).toHaveLength(3);
    });
  });

  describe('fails, naming what is missing', () => {
    it('when neither backend has a trace of the service', async () => {
      const result = await check(['--timeout', '4', '--interval', '2']);
      expect(result.code).toBe(1);
      expect(result.waits).toEqual([2000, 2000, 2000, 2000]);
      expect(result.out).toMatch(
        /Jaeger .*after 3 tries:\n {2}FAIL no trace of the demo agent's turn found/,
      );
      expect(result.out).toMatch(
        /Tempo .*after 3 tries:\n {2}FAIL no trace of the demo agent's turn found/,
      );
      expect(result.out).toContain('FAIL: 2 of 2 backends');
    });

    it('when the trace belongs to another service', async () => {
      storeEverywhere(demo.map((resource) => renamed(resource, 'someone-else')));
      const result = await check();
      expect(result.code).toBe(1);
      expect(result.out).toContain("FAIL no trace of the demo agent's turn found");
    });

    it('when only one backend has it', async () => {
      jaeger.store(demo);
      const result = await check();
      expect(result.code).toBe(1);
      expect(result.out).toMatch(/Jaeger[^\n]*\n(.*\n)*? {2}OK the demo agent's turn/);
      expect(result.out).toContain('FAIL: 1 of 2 backends');
    });

    it('when a call is missing', async () => {
      storeEverywhere(changeCall(demo, 'write_report', () => undefined));
      const result = await check();
      expect(result.code).toBe(1);
      expect(result.out.match(/FAIL no execute_tool span for write_report/g)).toHaveLength(2);
    });

    it('when the failed call is not marked ERROR', async () => {
      storeEverywhere(
        changeCall(demo, 'fetch_prices', (span) => ({ ...span, status: { code: 1 } })),
      );
      const result = await check();
      expect(result.code).toBe(1);
      expect(result.out).toContain('FAIL fetch_prices ended OK, expected ERROR');
    });

    it('when the cancelled call looks like an ordinary failure', async () => {
      storeEverywhere(
        changeCall(demo, 'slow_search', (span) => ({
          ...span,
          attributes: (span.attributes ?? []).filter(
            (entry) => entry.key !== 'tooltrace.tool.cancelled' && entry.key !== 'error.type',
          ),
        })),
      );
      const result = await check();
      expect(result.code).toBe(1);
      expect(result.out).toContain('FAIL slow_search ended ERROR, expected cancelled');
    });

    it('when a nested call is not under its caller', async () => {
      storeEverywhere(
        changeCall(demo, 'lookup_weather', (span) => ({ ...span, parentSpanId: '' })),
      );
      const result = await check();
      expect(result.code).toBe(1);
      expect(result.out).toContain(
        'FAIL lookup_weather is not nested under plan_trip (its callers: none)',
      );
    });

    it('when a call was exported twice or an unexpected tool ran', async () => {
      const report = allSpans(demo).find(
        (span) => attribute(span, 'gen_ai.tool.name') === 'write_report',
      )!;
      const stranger = structuredClone(report);
      stranger.spanId = hexId(8, 9);
      stranger.name = 'execute_tool rm_rf';
      stranger.attributes = [{ key: 'gen_ai.tool.name', value: { stringValue: 'rm_rf' } }];
      storeEverywhere(withSpans(demo, [{ ...report, spanId: hexId(8, 8) }, stranger]));
      const result = await check();
      expect(result.code).toBe(1);
      expect(result.out).toContain('FAIL 2 execute_tool spans for write_report, expected one');
      expect(result.out).toContain('FAIL unexpected execute_tool span for rm_rf');
    });

    it('when a backend cannot be reached', async () => {
      const url = jaeger.url;
      await jaeger.close();
      jaeger = await startJaegerStandIn();
      const stdout = new Output();
      const code = await runTraceCheck(['--jaeger', url, '--since', since, '--timeout', '0'], {
        stdout,
        stderr: new Output(),
      });
      expect(code).toBe(1);
      expect(stdout.text).toMatch(
        /FAIL could not query it: GET http:\/\/127\.0\.0\.1:\d+\/api\/v3\/traces\?.* failed/,
      );
    });
  });

  describe('usage', () => {
    it('exits 2 without a backend or with a bad value, saying why', async () => {
      for (const [args, message] of [
        [['--since', since], 'name --jaeger or --tempo'],
        [
          ['--jaeger', 'http://127.0.0.1:1', '--since', 'yesterday'],
          '--since yesterday: not a date',
        ],
        [
          ['--tempo', 'http://127.0.0.1:1', '--interval', '0'],
          '--interval 0: not a positive number',
        ],
        [['--jaeger', 'http://127.0.0.1:1', '--bogus'], "Unknown option '--bogus'"],
      ] as const) {
        const stderr = new Output();
        expect(await runTraceCheck(args, { stdout: new Output(), stderr })).toBe(2);
        expect(stderr.text).toContain(message);
      }
    });
  });

  describe('normalizeId()', () => {
    it('reads hex, hex without leading zeros (an odd count of digits too) and base64 as the same id', () => {
      const hex = '00f067aa0ba902b7a3ce1c0e1f2e3d4c';
      expect(normalizeId(hex.toUpperCase(), 16, 'id')).toBe(hex);
      expect(normalizeId(hex.replace(/^0+/, ''), 16, 'id')).toBe(hex);
      expect(normalizeId('ba902b7a3ce1c0e1f2e3d4c', 16, 'id')).toBe(
        '000000000ba902b7a3ce1c0e1f2e3d4c',
      );
      expect(normalizeId(Buffer.from(hex, 'hex').toString('base64'), 16, 'id')).toBe(hex);
      expect(normalizeId('AAAAAAAAAAA=', 8, 'id')).toBe('');
      expect(() => normalizeId('c3BhbjE=', 8, 'span')).toThrow(
        /span: c3BhbjE= is neither 16 hex digits nor 8 base64 bytes/,
      );
    });
  });
});
