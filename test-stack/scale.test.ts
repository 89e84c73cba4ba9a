/**
 * The at-scale path, run: two Collectors of deploy/collector-backend.yaml (tail sampling) behind
 * one of deploy/collector-gateway.yaml (the load-balancing exporter, routing by trace id), fed
 * by two sidecars, into Jaeger. The files run as shipped, their addresses set through their
 * `${env:…}` references, with Tempo left out of the backends' pipeline (not built here).
 *
 * What the sidecars ended (their `--out` files) is compared with what Jaeger holds, trace by
 * trace: every trace Jaeger has is whole, and the tail-sampling policies keep what the README
 * says (every failed call, every cancelled one, every call still running, a quarter of the
 * rest). Then one backend is SIGKILLed in the middle of a run and what is lost is counted:
 * docs/scale.md gives the figure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  eventually,
  JaegerQuery,
  ROOT,
  startCollector,
  startJaeger,
  type Collector,
  type Jaeger,
} from '../scripts/stack/stack.js';
import { killSidecars } from '../test/sidecar/sidecar-process.js';
import type { ReceivedSpan } from '../src/testing/index.js';
import { collectorCounter } from './collector-metrics.js';
import { countByKey, spanKey, storedSpans, type StoredSpan } from './jaeger-spans.js';
import { planTurns, SPANS_PER_TURN, type TurnPlan } from './journal.js';
import { endInput, feedTurns, startFedSidecar } from './sidecar-feed.js';
import { readOtlpJsonLines } from './stack-peers.js';

/** The backends' config as shipped, minus Tempo (not built here: AGPL). */
const BACKEND = join(ROOT, 'deploy/collector-backend.yaml');
const BACKEND_OVERRIDES = ['service::pipelines::traces::exporters: [otlp_grpc/jaeger]'];
const GATEWAY = join(ROOT, 'deploy/collector-gateway.yaml');
/** The backends' tail_sampling decision_wait, as shipped. */
const DECISION_WAIT_MS = 10_000;

const binaries = inject('stackBinaries');
let jaeger: Jaeger;
let query: JaegerQuery;
const folder = mkdtempSync(join(tmpdir(), 'tooltrace-stack-scale-'));
const backends: Collector[] = [];
let gateway: Collector;

beforeAll(async () => {
  jaeger = await startJaeger(binaries.jaeger);
  query = new JaegerQuery(jaeger.queryUrl);
  for (const name of ['backend-1', 'backend-2']) {
    backends.push(
      await startCollector(binaries.collector, {
        name,
        configs: [BACKEND],
        overrides: BACKEND_OVERRIDES,
        env: { JAEGER_OTLP_ENDPOINT: jaeger.otlpGrpcEndpoint },
      }),
    );
  }
  const addresses = backends.map((backend) => new URL(backend.otlpGrpcUrl).host);
  gateway = await startCollector(binaries.collector, {
    name: 'gateway',
    configs: [GATEWAY],
    env: { COLLECTOR_BACKENDS: `[${addresses.join(', ')}]` },
  });
}, 120_000);
afterEach(killSidecars);
afterAll(async () => {
  await Promise.all([gateway, ...backends, jaeger].map((part) => part?.process.kill()));
  rmSync(folder, { recursive: true, force: true });
});

/** What the two sidecars of one run ended, and what Jaeger stores of it. */
interface Run {
  written: ReceivedSpan[];
  stored: StoredSpan[];
  codes: (number | null)[];
  stderr: string[];
}

/**
 * Feeds each sidecar its half of the turns at `perSecond`, both exporting to the gateway over
 * OTLP/HTTP; calls `during` once the first sidecar is halfway; ends their input; then waits for
 * the backends to decide (decision_wait, then the batch timeout) and for Jaeger's count to stop
 * changing (at most 45 s more).
 */
async function run(
  service: string,
  halves: readonly [TurnPlan[], TurnPlan[]],
  options: {
    perSecond: number;
    slow?: Set<TurnPlan>;
    slowMs?: number;
    /** Called once the first sidecar has started `duringAt` turns. */
    during?: () => Promise<void>;
    duringAt?: number;
  },
): Promise<Run> {
  const outFiles = halves.map((_, index) => join(folder, `${service}-${index + 1}.jsonl`));
  const sidecars = outFiles.map((outFile) =>
    startFedSidecar({ endpoint: gateway.otlpHttpUrl, protocol: 'http/protobuf', service, outFile }),
  );
  let halfway: Promise<void> = Promise.resolve();
  const at = options.duringAt ?? Math.floor(halves[0].length / 2);
  await Promise.all(
    sidecars.map((sidecar, index) =>
      feedTurns(sidecar, halves[index]!, {
        perSecond: options.perSecond,
        ...(options.slow === undefined ? {} : { slow: options.slow }),
        ...(options.slowMs === undefined ? {} : { slowMs: options.slowMs }),
        onProgress: (started) => {
          if (index === 0 && options.during !== undefined && started >= at) {
            const during = options.during;
            options = { ...options, during: undefined };
            halfway = during();
          }
        },
      }),
    ),
  );
  await halfway;
  const codes = await Promise.all(sidecars.map((sidecar) => endInput(sidecar, 90_000)));
  const written = outFiles.flatMap((outFile) => readOtlpJsonLines(outFile));
  // Nothing shows before decision_wait; then the count settles.
  await new Promise((resolve) => setTimeout(resolve, DECISION_WAIT_MS));
  const stored = await settled(service, 45_000);
  return { written, stored, codes, stderr: sidecars.map((sidecar) => sidecar.stderr()) };
}

/**
 * What Jaeger stores of `service` once its count has not changed for 3 s (at most `timeoutMs`).
 */
async function settled(service: string, timeoutMs: number): Promise<StoredSpan[]> {
  let last = -1;
  let lastChange = Date.now();
  return eventually(
    `Jaeger's count of ${service} settling`,
    async () => {
      const spans = await storedSpans(query, service);
      if (spans.length !== last) {
        last = spans.length;
        lastChange = Date.now();
        return undefined;
      }
      return Date.now() - lastChange >= 3000 ? spans : undefined;
    },
    timeoutMs,
  );
}

/** Spans by trace id. */
function byTrace<T extends { traceId: string }>(spans: readonly T[]): Map<string, T[]> {
  const traces = new Map<string, T[]>();
  for (const span of spans) {
    const list = traces.get(span.traceId) ?? [];
    list.push(span);
    traces.set(span.traceId, list);
  }
  return traces;
}

/** How the sidecar's spans tell a trace's kind (what the policies look at). */
function kindOf(spans: readonly ReceivedSpan[]): 'inflight' | 'cancelled' | 'error' | 'ok' {
  if (spans.some((span) => span.attributes['tooltrace.inflight'] === true)) return 'inflight';
  if (spans.some((span) => span.attributes['tooltrace.tool.cancelled'] === true))
    return 'cancelled';
  if (spans.some((span) => span.status.code === 2)) return 'error';
  return 'ok';
}

describe('two backend Collectors behind a gateway Collector, fed by two sidecars', () => {
  it('puts every trace whole in Jaeger and keeps every failed, cancelled and running call, about a quarter of the rest', async () => {
    const service = 'scale-sampling';
    const halves = [0, 1].map((half) =>
      planTurns(400, { prefix: `${service}-${half}`, errorEvery: 10, cancelledEvery: 10 }),
    ) as [TurnPlan[], TurnPlan[]];
    // One call in twenty runs 3 s, past the sidecar's live interval (1 s): it sends in-flight
    // snapshots before its final span. (How many depends on when the sidecar reads the lines: on
    // a machine this loaded it can read a call's start late, so the count is not asserted.)
    const slow = new Set(
      halves.flat().filter((turn, index) => turn.outcome === 'ok' && index % 20 === 5),
    );
    const { written, stored, codes, stderr } = await run(service, halves, {
      perSecond: 100,
      slow,
      slowMs: 3000,
    });

    const writtenTraces = byTrace(written);
    const storedTraces = byTrace(stored);
    const kept = { inflight: 0, cancelled: 0, error: 0, ok: 0 };
    const offered = { inflight: 0, cancelled: 0, error: 0, ok: 0 };
    const partial: string[] = [];
    for (const [traceId, spans] of writtenTraces) {
      const kind = kindOf(spans);
      offered[kind] += 1;
      const held = storedTraces.get(traceId);
      if (held === undefined) continue;
      kept[kind] += 1;
      const want = spans.map(spanKey).sort();
      const have = held.map(spanKey).sort();
      if (JSON.stringify(want) !== JSON.stringify(have)) partial.push(traceId);
    }
    const accepted = await Promise.all(
      backends.map((backend) =>
        collectorCounter(backend.metricsUrl, 'otelcol_receiver_accepted_spans'),
      ),
    );
    console.log(
      `scale: sampling: ${JSON.stringify({ offered, kept, partial: partial.length, accepted })}`,
    );

    expect(codes, stderr.map((text) => text.slice(-2000)).join('\n')).toEqual([0, 0]);
    const snapshots = written.filter((span) => span.attributes['tooltrace.inflight'] === true);
    expect(written.length - snapshots.length).toBe(halves.flat().length * SPANS_PER_TURN);
    // Routed by trace id to both backends.
    for (const count of accepted) expect(count).toBeGreaterThan(0);
    expect([...countByKey(stored).values()].filter((count) => count > 1)).toEqual([]);
    expect(stored.every((span) => writtenTraces.has(span.traceId))).toBe(true);
    expect(partial).toEqual([]);
    expect(offered.inflight).toBeGreaterThan(slow.size / 2);
    expect(kept.inflight).toBe(offered.inflight);
    expect(kept.error).toBe(offered.error);
    expect(kept.cancelled).toBe(offered.cancelled);
    // 25 % of about 600 traces: 150 expected, 3 standard deviations is ±32.
    expect(kept.ok / offered.ok).toBeGreaterThan(0.18);
    expect(kept.ok / offered.ok).toBeLessThan(0.32);
  }, 240_000);

  it('loses, when a backend dies, the traces it held for decision_wait; the gateway keeps what it routes there until it is back: counted', async () => {
    const service = 'scale-backend-dies';
    // Every call fails, so every trace is kept: what is missing was lost, not sampled out.
    const halves = [0, 1].map((half) =>
      planTurns(1000, { prefix: `${service}-${half}`, all: 'error' }),
    ) as [TurnPlan[], TurnPlan[]];
    const perSecond = 50;
    // 20 s of traffic; backend 2 is killed after 14 s, once it has decided on (and sent) what
    // it received in the first 4 s, while it holds the next 10 s (its decision_wait).
    const dead = backends[1]!;
    const { written, stored, codes } = await run(service, halves, {
      perSecond,
      duringAt: 14 * perSecond,
      during: () => dead.process.kill(),
    });
    const writtenTraces = byTrace(written);
    const whileDead = lossOf(writtenTraces, stored);
    // Started again on the same ports: the gateway's queue for it drains, then decision_wait
    // passes again.
    const port = (url: string): number => Number(new URL(url).port);
    backends[1] = await startCollector(binaries.collector, {
      name: 'backend-2 again',
      configs: [BACKEND],
      overrides: BACKEND_OVERRIDES,
      env: { JAEGER_OTLP_ENDPOINT: jaeger.otlpGrpcEndpoint },
      ports: {
        otlpGrpc: port(dead.otlpGrpcUrl),
        otlpHttp: port(dead.otlpHttpUrl),
        health: port(dead.healthUrl),
        metrics: port(dead.metricsUrl),
      },
    });
    const again = backends[1];
    await eventually(
      'the gateway sending its queue to the backend started again',
      async () =>
        (await collectorCounter(again.metricsUrl, 'otelcol_receiver_accepted_spans')) > 0
          ? true
          : undefined,
      60_000,
    );
    // Each queued request is retried on its own backoff (at most 30 s apart): all of them have
    // been sent 30 s after the first, then decision_wait passes on the backend.
    await new Promise((resolve) => setTimeout(resolve, 30_000 + DECISION_WAIT_MS));
    const afterRestart = lossOf(writtenTraces, await settled(service, 45_000));
    // Half the trace ids hash to each backend. The dead one held what it received in the last
    // decision_wait, what its batch processor held after deciding (timeout 2 s), and the
    // gateway's batch before that (1 s): its share of about 13 s of traffic.
    const heldMs = DECISION_WAIT_MS + 2000 + 1000;
    const expectedLost = (2 * perSecond * (heldMs / 1000)) / 2;
    const figures = {
      traces: writtenTraces.size,
      spans: written.length,
      whileDead,
      afterRestart,
      expectedLostTraces: expectedLost,
    };
    console.log(`scale: a backend dies mid-run: ${JSON.stringify(figures)}`);

    // The sidecars delivered everything to the gateway: the loss is behind it.
    expect(codes).toEqual([0, 0]);
    expect(whileDead.duplicated).toBe(0);
    expect(afterRestart.duplicated).toBe(0);
    // Traces travel whole: what is lost is lost a trace at a time.
    expect(whileDead.partialTraces).toBe(0);
    expect(afterRestart.partialTraces).toBe(0);
    // While it is down, its share of everything since 10 s before the kill is missing; once it
    // is back, only what it held when it died.
    expect(whileDead.lostTraces).toBeGreaterThan(afterRestart.lostTraces);
    expect(afterRestart.lostTraces).toBeGreaterThan(expectedLost * 0.5);
    expect(afterRestart.lostTraces).toBeLessThan(expectedLost * 1.5);
  }, 300_000);
});

/** What of the sidecars' traces Jaeger misses, whole traces and spans. */
function lossOf(
  writtenTraces: Map<string, ReceivedSpan[]>,
  stored: readonly StoredSpan[],
): { lostTraces: number; lostSpans: number; partialTraces: number; duplicated: number } {
  const storedTraces = byTrace(stored);
  let lostTraces = 0;
  let lostSpans = 0;
  let partialTraces = 0;
  for (const [traceId, spans] of writtenTraces) {
    const held = storedTraces.get(traceId)?.length ?? 0;
    if (held === 0) lostTraces += 1;
    else if (held !== spans.length) partialTraces += 1;
    lostSpans += Math.max(0, spans.length - held);
  }
  const duplicated = [...countByKey(stored).values()].filter((count) => count > 1).length;
  return { lostTraces, lostSpans, partialTraces, duplicated };
}
