/**
 * Faults with the real Collector between the sidecar and Jaeger: the Collector SIGKILLed while
 * the sidecar exports, then started again; its `memory_limiter` refusing. What the sidecar ended
 * (its `--out` file, written as spans end) is compared span by span, by trace and span id, with
 * what Jaeger holds, read through Jaeger's query API with its adjusters off (`raw=true`), so a
 * span stored twice counts twice.
 *
 * The Collector runs the repo's otel-collector-config.yaml with three changes, each a `yaml:`
 * override on the command line: Tempo left out (not built here), and no `batch` processor and no
 * `sending_queue` on the Jaeger exporter, so that the Collector answers a request only once
 * Jaeger took its spans. With the file as shipped, the Collector acknowledges spans as soon as
 * they are queued in its memory, and a SIGKILL loses what it acknowledged and had not yet sent:
 * no client can get those back (docs/scale.md gives the figure and the two ways out).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackBinaries, type StackBinaries } from './binaries.js';
import { startCollector, startJaeger, type RunningCollector, type RunningJaeger } from './fleet.js';
import {
  compareDelivery,
  storedSpans,
  writtenSpans,
  type Delivery,
  type WrittenSpan,
} from './jaeger-spans.js';
import { planTurns, SPANS_PER_TURN } from './journal.js';
import { freePort, killAll, sleep, waitFor, type Child } from './processes.js';
import { endInput, feedTurns, startSidecar } from './sidecar-feed.js';

/** The repo's Collector config, acknowledging only what Jaeger took (see the file comment). */
const END_TO_END = [
  'otel-collector-config.yaml',
  'yaml:service::pipelines::traces::processors: [memory_limiter, transform/mask-credentials]',
  'yaml:service::pipelines::traces::exporters: [otlp_grpc/jaeger]',
  'yaml:exporters::otlp_grpc/jaeger::sending_queue::enabled: false',
];

let binaries: StackBinaries;
let jaeger: RunningJaeger;
let directory: string;

beforeAll(async () => {
  binaries = await stackBinaries();
  jaeger = await startJaeger(binaries.jaeger);
  directory = await mkdtemp(join(tmpdir(), 'tooltrace-faults-'));
}, 45 * 60_000);

afterAll(async () => {
  await jaeger?.child.stop();
  await killAll();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** Ports and environment of one Collector, kept so that a restart binds the same ones. */
interface CollectorSetup {
  env: Record<string, string>;
  health: string;
  grpc: string;
  http: string;
}

async function collectorSetup(): Promise<CollectorSetup> {
  const [grpc, http, health] = await Promise.all([freePort(), freePort(), freePort()]);
  const setup = {
    grpc: `127.0.0.1:${grpc}`,
    http: `127.0.0.1:${http}`,
    health: `127.0.0.1:${health}`,
  };
  return {
    ...setup,
    env: {
      OTELCOL_OTLP_GRPC_ENDPOINT: setup.grpc,
      OTELCOL_OTLP_HTTP_ENDPOINT: setup.http,
      OTELCOL_HEALTH_ENDPOINT: setup.health,
      JAEGER_OTLP_ENDPOINT: jaeger.otlpGrpcEndpoint,
    },
  };
}

function collector(setup: CollectorSetup, configs: readonly string[]): Promise<RunningCollector> {
  return startCollector('collector', {
    binary: binaries.collector,
    configs,
    env: setup.env,
    healthEndpoint: setup.health,
  });
}

/**
 * Waits (at most 30 s) until Jaeger holds at least as many spans of `service` as the sidecar
 * wrote, then a second more (a late duplicate would show), and compares.
 */
async function deliveryOf(service: string, written: readonly WrittenSpan[]): Promise<Delivery> {
  await waitFor(
    `Jaeger holding the ${written.length} spans of ${service}`,
    async () =>
      (await storedSpans(jaeger.url, service)).length >= written.length ? true : undefined,
    30_000,
    500,
  ).catch(() => undefined);
  await sleep(1000);
  return compareDelivery(written, await storedSpans(jaeger.url, service));
}

/** The last status line of a sidecar that wrote and exported `count` spans, none left. */
function allDelivered(count: number): RegExp {
  return new RegExp(`\\b${count} spans written to .+, ${count} exported to .+, 0 waiting$`);
}

/** The sidecar's last status line: `… N spans exported …, M waiting`. */
function lastStatus(sidecar: Child): string {
  return sidecar.output
    .split('\n')
    .filter((line) => / waiting$/.test(line))
    .at(-1)!;
}

describe('the sidecar against a real Collector that fails', () => {
  describe.each(['http/protobuf', 'grpc'] as const)(
    'the Collector killed mid-stream and started again (%s)',
    (protocol) => {
      it('delivers every span of the run to Jaeger exactly once, and exits 0 saying export failed and worked again', async () => {
        const setup = await collectorSetup();
        let running = await collector(setup, END_TO_END);
        const service = `faults-kill-${protocol.replace('/', '-')}`;
        const outFile = join(directory, `${service}.jsonl`);
        const sidecar = startSidecar(`sidecar ${protocol}`, {
          endpoint: protocol === 'grpc' ? `http://${setup.grpc}` : `http://${setup.http}`,
          protocol,
          service,
          outFile,
        });
        const turns = planTurns(1200, { prefix: service, errorEvery: 10, cancelledEvery: 10 });
        const feeding = feedTurns(sidecar, turns, { perSecond: 200 });
        // Killed once spans are flowing into Jaeger: a third of the way through the feed.
        await waitFor(
          'the first spans in Jaeger',
          async () => ((await storedSpans(jaeger.url, service, 100)).length > 0 ? true : undefined),
          20_000,
        );
        await sleep(1000);
        const beforeKill = (await storedSpans(jaeger.url, service)).length;
        await running.child.stop('SIGKILL');
        await sleep(2000);
        running = await collector(setup, END_TO_END);
        await feeding;
        const code = await endInput(sidecar, 90_000);

        const written = await writtenSpans(outFile);
        const delivery = await deliveryOf(service, written);
        const report = {
          protocol,
          beforeKill,
          ...delivery,
          duplicated: delivery.duplicated.length,
        };
        console.log(`faults: collector killed mid-stream: ${JSON.stringify(report)}`);
        await running.child.stop();

        expect(written).toHaveLength(turns.length * SPANS_PER_TURN);
        // The kill fell in the middle of the run: some spans were in Jaeger, not all.
        expect(beforeKill).toBeGreaterThan(0);
        expect(beforeKill).toBeLessThan(written.length);
        expect(delivery.missing).toEqual([]);
        expect(delivery.duplicated).toEqual([]);
        expect(delivery.unknown).toEqual([]);
        expect(delivery.once).toBe(written.length);
        expect(code, sidecar.output.slice(-3000)).toBe(0);
        expect(sidecar.output).toMatch(/export failed \(.+\); retrying, nothing is dropped/);
        expect(sidecar.output).toMatch(/export to .+ works again/);
        expect(lastStatus(sidecar)).toMatch(
          allDelivered(written.length),
        );
      }, 180_000);
    },
  );

  describe('its memory_limiter refusing', () => {
    /** A memory_limiter whose soft limit (limit − spike) any Go heap is above: it refuses all. */
    const REFUSING = 'processors:\n  memory_limiter:\n    limit_mib: 2\n    spike_limit_mib: 1\n';
    /** The limit the repo ships. */
    const SHIPPED =
      'processors:\n  memory_limiter:\n    limit_mib: 400\n    spike_limit_mib: 100\n';

    /**
     * Waits (at most 10 s) for the memory_limiter's first check, a second after start: until
     * then it lets everything through.
     */
    async function refusing(running: RunningCollector): Promise<void> {
      await waitFor(
        'the memory_limiter refusing data',
        async () => (running.child.output.includes('Refusing data') ? true : undefined),
        10_000,
      );
    }

    it('has the sidecar keep and retry its spans; once the limit is raised (SIGHUP) all arrive exactly once, exit 0', async () => {
      const setup = await collectorSetup();
      const limits = join(directory, 'limits.yaml');
      await writeFile(limits, REFUSING);
      const running = await collector(setup, [...END_TO_END, limits]);
      await refusing(running);
      const service = 'faults-memory-limiter';
      const outFile = join(directory, `${service}.jsonl`);
      const sidecar = startSidecar('sidecar memory_limiter', {
        endpoint: `http://${setup.http}`,
        protocol: 'http/protobuf',
        service,
        outFile,
      });
      const turns = planTurns(300, { prefix: service, errorEvery: 10 });
      await feedTurns(sidecar, turns, { perSecond: 300 });
      await waitFor(
        'the sidecar told of a refusal',
        async () => (/export failed \(503/.test(sidecar.output) ? true : undefined),
        20_000,
      );
      await sleep(2000);
      const whileRefusing = (await storedSpans(jaeger.url, service)).length;
      // The operator raises the limit; the Collector reloads its configuration on SIGHUP.
      await writeFile(limits, SHIPPED);
      running.child.process.kill('SIGHUP');
      const code = await endInput(sidecar, 90_000);

      const written = await writtenSpans(outFile);
      const delivery = await deliveryOf(service, written);
      console.log(
        `faults: memory_limiter refusing, then raised: ${JSON.stringify({ whileRefusing, ...delivery, duplicated: delivery.duplicated.length })}`,
      );
      await running.child.stop();

      expect(whileRefusing).toBe(0);
      expect(written).toHaveLength(turns.length * SPANS_PER_TURN);
      expect(delivery.missing).toEqual([]);
      expect(delivery.duplicated).toEqual([]);
      expect(delivery.once).toBe(written.length);
      expect(code, sidecar.output.slice(-3000)).toBe(0);
      expect(sidecar.output).toMatch(
        /export failed \(503.*memory.*\); retrying, nothing is dropped/,
      );
      expect(lastStatus(sidecar)).toMatch(
        allDelivered(written.length),
      );
    }, 180_000);

    it('refusing to the end: the sidecar exits 4 and says how many spans were not delivered; Jaeger holds none', async () => {
      const setup = await collectorSetup();
      const limits = join(directory, 'limits-refusing.yaml');
      await writeFile(limits, REFUSING);
      const running = await collector(setup, [...END_TO_END, limits]);
      await refusing(running);
      const service = 'faults-memory-limiter-to-the-end';
      const outFile = join(directory, `${service}.jsonl`);
      const sidecar = startSidecar('sidecar refused', {
        endpoint: `http://${setup.http}`,
        protocol: 'http/protobuf',
        service,
        outFile,
        shutdownTimeout: '3s',
      });
      const turns = planTurns(100, { prefix: service });
      await feedTurns(sidecar, turns, { perSecond: 500 });
      const code = await endInput(sidecar, 30_000);
      const written = await writtenSpans(outFile);
      await sleep(1500);
      const stored = await storedSpans(jaeger.url, service);
      await running.child.stop();

      expect(written).toHaveLength(turns.length * SPANS_PER_TURN);
      expect(stored).toEqual([]);
      expect(code, sidecar.output.slice(-3000)).toBe(4);
      expect(sidecar.output).toContain(
        `shutdown timeout: ${written.length} spans were not delivered to`,
      );
      expect(sidecar.output).toMatch(/spans were not delivered: \d+ to .+; exit code 4/);
    }, 120_000);
  });
});
