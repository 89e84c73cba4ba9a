import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  eventually,
  JaegerQuery,
  startCollector,
  startJaeger,
  tagOf,
  type Collector,
  type Jaeger,
  type JaegerTrace,
} from '../scripts/stack/stack.js';
import { killSidecars, startSidecar } from '../test/sidecar/sidecar-process.js';
import {
  allSpans,
  jaegerShapes,
  otlpShapes,
  readOtlpJsonLines,
  runTooltrace,
} from './stack-peers.js';

const binaries = inject('stackBinaries');
let collector: Collector;
let jaegerProcess: Jaeger;
let jaeger: JaegerQuery;
const folder = mkdtempSync(join(tmpdir(), 'tooltrace-stack-demo-'));

// The traces half of the stack: Jaeger and the Collector with the repo's config (no metrics here).
beforeAll(async () => {
  jaegerProcess = await startJaeger(binaries.jaeger);
  collector = await startCollector(binaries.collector, {
    env: { JAEGER_OTLP_ENDPOINT: jaegerProcess.otlpGrpcEndpoint },
    overrides: ['service::pipelines::traces::exporters: [otlp_grpc/jaeger]'],
  });
  jaeger = new JaegerQuery(jaegerProcess.queryUrl);
});
afterAll(async () => {
  await collector?.process.stop();
  await jaegerProcess?.process.stop();
  rmSync(folder, { recursive: true, force: true });
});
afterEach(killSidecars);

/**
 * Runs `tooltrace demo --fast`, forwarding its events to a sidecar that exports to the stack's
 * Collector over `protocol` as `service`; resolves to what the demo itself exported (its --out
 * file) and what Jaeger holds for `service` once every span has arrived.
 */
async function demoThroughSidecar(
  protocol: 'http/protobuf' | 'http/json' | 'grpc',
  service: string,
): Promise<{ exported: ReturnType<typeof readOtlpJsonLines>; traces: JaegerTrace[] }> {
  const endpoint = protocol === 'grpc' ? collector.otlpGrpcUrl : collector.otlpHttpUrl;
  const sidecar = startSidecar(
    [
      '--listen',
      '127.0.0.1:0',
      '--otlp-protocol',
      protocol,
      '--otlp-endpoint',
      endpoint,
      '--service-name',
      service,
      // The demo groups its run into one trace under a `session …` root span (traceBy
      // 'session'); the sidecar's default is a trace per turn, with no session span, so the
      // demo's 14 spans would arrive as 13.
      '--trace-by',
      'session',
      '--capture-content',
      '--status-interval',
      '0',
    ],
    { env: { OTEL_METRICS_EXPORTER: 'none' } },
  );
  const url = await sidecar.listenUrl();
  const out = join(folder, `${service}.jsonl`);
  const demo = await runTooltrace(['demo', '--fast', '--no-color', '--out', out, '--forward', url]);
  expect(demo.code, demo.stderr).toBe(0);
  sidecar.child.kill('SIGTERM');
  const exit = await sidecar.exited;
  expect(exit.code, sidecar.stderr()).toBe(0);

  const exported = readOtlpJsonLines(out);
  const expected = exported.filter((span) => span.attributes['tooltrace.inflight'] !== true).length;
  // The Collector batches for a second and Jaeger stores on arrival: wait for every final span.
  const traces = await eventually(`${expected} spans of ${service} in Jaeger`, async () => {
    const found = await jaeger.traces(service);
    const finals = allSpans(found).filter((span) => tagOf(span, 'tooltrace.inflight') !== true);
    // Thrown, not undefined, so a timeout names how many did arrive.
    if (finals.length < expected) throw new Error(`${finals.length} there so far`);
    return found;
  });
  return { exported, traces };
}

describe('the demo, forwarded to the sidecar and exported to the real Collector, in Jaeger', () => {
  for (const protocol of ['http/protobuf', 'http/json', 'grpc'] as const) {
    describe(`over ${protocol}`, () => {
      let run: Awaited<ReturnType<typeof demoThroughSidecar>>;
      beforeAll(async () => {
        run = await demoThroughSidecar(protocol, `demo-${protocol.replace('/', '-')}`);
      });

      it('has the tree, names, statuses and stream events the demo drew from the same run', () => {
        expect(jaegerShapes(run.traces)).toEqual(otlpShapes(run.exported));
      });

      it('tells OK, failed and cancelled calls apart', () => {
        const tools = allSpans(run.traces).filter(
          (span) =>
            span.operationName.startsWith('execute_tool') &&
            tagOf(span, 'tooltrace.inflight') !== true,
        );
        const ok = tools.filter((span) => tagOf(span, 'otel.status_code') === 'OK');
        const cancelled = tools.filter((span) => tagOf(span, 'tooltrace.tool.cancelled') === true);
        const failed = tools.filter(
          (span) =>
            tagOf(span, 'otel.status_code') === 'ERROR' &&
            tagOf(span, 'tooltrace.tool.cancelled') !== true,
        );
        expect(ok.length).toBeGreaterThan(0);
        expect(failed.length).toBeGreaterThan(0);
        expect(cancelled.length).toBeGreaterThan(0);
        for (const span of cancelled) expect(tagOf(span, 'error.type')).toBe('cancelled');
        for (const span of failed) {
          expect(tagOf(span, 'error.type')).not.toBe('cancelled');
          expect(span.logs.map((log) => tagOf(log, 'event'))).toContain('exception');
        }
      });

      it('keeps the GenAI attributes and the stream events of each tool call', () => {
        const tools = allSpans(run.traces).filter((span) =>
          span.operationName.startsWith('execute_tool '),
        );
        for (const span of tools) {
          expect(tagOf(span, 'gen_ai.operation.name')).toBe('execute_tool');
          expect(span.operationName).toBe(
            `execute_tool ${String(tagOf(span, 'gen_ai.tool.name'))}`,
          );
          expect(tagOf(span, 'gen_ai.tool.call.id')).toEqual(expect.any(String));
          expect(tagOf(span, 'gen_ai.conversation.id')).toEqual(expect.any(String));
        }
        const events = allSpans(run.traces).flatMap((span) =>
          span.logs.map((log) => tagOf(log, 'event')),
        );
        expect(events).toContain('tool.stream.partial');
        expect(events).toContain('tool.stream.progress');
        const agents = allSpans(run.traces).filter((span) =>
          span.operationName.startsWith('invoke_agent'),
        );
        expect(agents.length).toBeGreaterThan(0);
        const process = run.traces[0]!.processes[run.traces[0]!.spans[0]!.processID]!;
        expect(process.serviceName).toBe(`demo-${protocol.replace('/', '-')}`);
      });
    });
  }
});
