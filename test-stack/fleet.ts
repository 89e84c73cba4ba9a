import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child, freePort, waitFor } from './processes.js';

/** Options for {@link startCollector}. */
export interface CollectorOptions {
  /** The built Collector. */
  binary: string;
  /** `--config` values, merged in order: repo files, temporary files, `yaml:` overrides. */
  configs: readonly string[];
  /** Environment for the `${env:…}` references of the configs. */
  env: Record<string, string>;
  /** Where its health_check extension answers (`127.0.0.1:PORT`), to wait for readiness. */
  healthEndpoint: string;
}

/** A Collector started by {@link startCollector}: its process and how to start it again. */
export interface RunningCollector {
  child: Child;
  /** Its internal metrics (Prometheus text), at `127.0.0.1:PORT/metrics`. */
  metricsUrl: string;
}

/**
 * Starts the Collector with `configs` (plus an override that moves its own telemetry to a free
 * 127.0.0.1 port, so several run side by side) and waits (at most 30 s) for its health check.
 */
export async function startCollector(
  name: string,
  options: CollectorOptions,
): Promise<RunningCollector> {
  const metricsPort = await freePort();
  const telemetry =
    'yaml:service::telemetry::metrics::readers: ' +
    `[{pull: {exporter: {prometheus: {host: 127.0.0.1, port: ${metricsPort}}}}}]`;
  const args = [...options.configs, telemetry].flatMap((config) => ['--config', config]);
  const child = new Child(name, options.binary, args, { ...process.env, ...options.env });
  await waitForHealth(child, `http://${options.healthEndpoint}/`);
  return { child, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}

/** Waits (at most 30 s) for `url` to answer 200, failing at once if `child` exits. */
export async function waitForHealth(child: Child, url: string): Promise<void> {
  await waitFor(
    `${child.name} ready at ${url}`,
    async () => {
      if (!child.running) {
        throw new Error(`${child.name} exited before it was ready:\n${child.output.slice(-4000)}`);
      }
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      return response.ok ? true : undefined;
    },
    30_000,
  );
}

/** A running Jaeger v2 with in-memory storage. */
export interface RunningJaeger {
  child: Child;
  /** Its query API base URL. */
  url: string;
  /** Where it takes OTLP/gRPC (`127.0.0.1:PORT`). */
  otlpGrpcEndpoint: string;
}

/**
 * Starts Jaeger v2 (all-in-one: OTLP/gRPC receiver, memory storage, query API) on free
 * 127.0.0.1 ports, and waits (at most 30 s) for its query API.
 */
export async function startJaeger(binary: string): Promise<RunningJaeger> {
  const [otlpPort, queryPort, queryGrpcPort, healthPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const directory = await mkdtemp(join(tmpdir(), 'tooltrace-jaeger-'));
  const config = join(directory, 'jaeger.yaml');
  await writeFile(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${healthPort}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${queryPort}
    grpc:
      endpoint: 127.0.0.1:${queryGrpcPort}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${otlpPort}
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`,
  );
  const child = new Child('jaeger', binary, ['--config', config], { ...process.env });
  const url = `http://127.0.0.1:${queryPort}`;
  await waitForHealth(child, `${url}/api/services`);
  return { child, url, otlpGrpcEndpoint: `127.0.0.1:${otlpPort}` };
}

/**
 * The value of one counter (summed over its series) in a Collector's Prometheus metrics, named
 * without the `_total` suffix (the Collector's own exporter leaves type suffixes out).
 */
export async function collectorCounter(metricsUrl: string, name: string): Promise<number> {
  const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([0-9.e+-]+)/.exec(line);
    if (match !== null && (match[1] === name || match[1] === `${name}_total`)) {
      sum += Number(match[3]);
    }
  }
  return sum;
}
