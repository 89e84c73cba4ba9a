/**
 * The local stack built from source — an OpenTelemetry Collector (scripts/stack/otelcol-builder.yaml),
 * Jaeger v2 and Prometheus — as parts that `npm run stack` (scripts/stack/run.ts) and the stack
 * suite (test-stack/) share: build the binaries (scripts/stack/build.sh, cached outside the repo),
 * start each on free 127.0.0.1 ports, wait until it is ready, read back what Jaeger and Prometheus
 * hold, and stop everything with its temporary folders.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The repo's Collector config for compose, which the stack runs too. */
export const COLLECTOR_CONFIG = join(ROOT, 'otel-collector-config.yaml');

/** Every Collector config in the repo: compose, the two gateway tiers, the Kubernetes ConfigMaps. */
export const COLLECTOR_CONFIGS: readonly string[] = [
  'otel-collector-config.yaml',
  'deploy/collector-gateway.yaml',
  'deploy/collector-backend.yaml',
  'deploy/kubernetes/collector/config/otel-agent.yaml',
  'deploy/kubernetes/collector/config/otel-gateway.yaml',
];

/** A failure of the stack, told in one line (`npm run stack` prints `message` alone). */
export class StackError extends Error {
  /** The line is already on the build's progress stream (build.sh said it), not to be repeated. */
  readonly shown: boolean;

  constructor(message: string, options?: ErrorOptions & { shown?: boolean }) {
    super(message, options);
    this.name = new.target.name;
    this.shown = options?.shown ?? false;
  }
}

/** Where the built programs are. */
export interface StackBinaries {
  collector: string;
  jaeger: string;
  prometheus: string;
}

/** Options for {@link buildStack}. */
export interface BuildOptions {
  /**
   * Where the build's progress goes (a first build takes minutes).
   * @default process.stderr
   */
  progress?: NodeJS.WritableStream;
  /** Aborting it stops the build (the script and the Go processes under it) and rejects. */
  signal?: AbortSignal;
}

/**
 * Builds the Collector, Jaeger and Prometheus once (scripts/stack/build.sh, cached in
 * ~/.cache/tooltrace/stack) and resolves to their paths; the second call costs a second. Rejects
 * with a {@link StackError} carrying the script's own one-line reason (no Go, a failed build).
 */
export async function buildStack(options: BuildOptions = {}): Promise<StackBinaries> {
  const progress = options.progress ?? process.stderr;
  // A process group of its own, so that stopping it stops the `go` commands under it too.
  const child = spawn('bash', [join(ROOT, 'scripts/stack/build.sh')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const stop = (): void => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  };
  options.signal?.addEventListener('abort', stop, { once: true });
  let stdout = '';
  let lastLine = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    progress.write(text);
    const lines = text.split('\n').filter((line) => line.startsWith('stack: '));
    if (lines.length > 0) lastLine = lines.at(-1)!.slice('stack: '.length);
  });
  const [code] = (await once(child, 'close')) as [number | null];
  options.signal?.removeEventListener('abort', stop);
  if (options.signal?.aborted === true) throw new StackError('the build was stopped');
  if (code !== 0) {
    // build.sh's own last `stack: …` line says why, and it went to `progress` already.
    if (lastLine !== '') throw new StackError(lastLine, { shown: true });
    throw new StackError(`scripts/stack/build.sh exited with ${code}`);
  }
  const paths = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=', 2) as [string, string]),
  );
  const { collector, jaeger, prometheus } = paths;
  if (collector === undefined || jaeger === undefined || prometheus === undefined) {
    throw new StackError(`scripts/stack/build.sh printed no paths:\n${stdout}`);
  }
  return { collector, jaeger, prometheus };
}

/** A free TCP port on 127.0.0.1 (the kernel's choice, released at once for a child to bind). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new StackError('no free port');
  return address.port;
}

/** Rejects with a {@link StackError} naming `what` when 127.0.0.1:`port` is taken. */
export async function assertPortFree(port: number, what: string): Promise<void> {
  const server = createServer();
  const failed = once(server, 'error').then(([error]) => error as NodeJS.ErrnoException);
  server.listen(port, '127.0.0.1');
  const outcome = await Promise.race([once(server, 'listening').then(() => undefined), failed]);
  if (outcome === undefined) {
    server.close();
    await once(server, 'close');
    return;
  }
  throw new StackError(
    outcome.code === 'EADDRINUSE'
      ? `port ${port} on 127.0.0.1 (${what}) is already in use`
      : `cannot listen on 127.0.0.1:${port} (${what}): ${outcome.message}`,
  );
}

/** A program of the stack running as a child process. */
export class StackProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited (with its code, or the signal that ended it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #log = '';
  readonly #folders: string[];

  constructor(name: string, child: ChildProcess, folders: string[] = []) {
    this.name = name;
    this.child = child;
    this.#folders = folders;
    const keep = (text: string): void => {
      // The start-up and the last 64 KiB: enough to say why it failed, bounded for long runs.
      this.#log += text;
      if (this.#log.length > 128 * 1024) {
        this.#log = `${this.#log.slice(0, 32 * 1024)}\n…\n${this.#log.slice(-64 * 1024)}`;
      }
    };
    child.stdout?.setEncoding('utf8').on('data', keep);
    child.stderr?.setEncoding('utf8').on('data', keep);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  /** What it wrote to stdout and stderr (bounded). */
  log(): string {
    return this.#log;
  }

  /** Whether it has exited. */
  get hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /**
   * Ends it (SIGTERM, then SIGKILL after `graceMs`) and removes its temporary folders. Safe to
   * call twice.
   */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.hasExited) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      timer.unref();
      await this.exited;
      clearTimeout(timer);
    }
    for (const folder of this.#folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  }

  /** Kills it at once (SIGKILL), as a crash would. */
  async kill(): Promise<void> {
    if (!this.hasExited) this.child.kill('SIGKILL');
    await this.exited;
  }
}

function startProcess(
  name: string,
  binary: string,
  args: string[],
  env: Record<string, string>,
  folders: string[] = [],
): StackProcess {
  const child = spawn(binary, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A binary that cannot be started reports it through `exit` with a code, not as a throw.
  child.on('error', () => {});
  return new StackProcess(name, child, folders);
}

/**
 * Polls `url` until it answers 200; rejects with the process's log when the process exits first
 * or after `timeoutMs`.
 */
export async function waitUntilReady(
  process: StackProcess,
  url: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (process.hasExited) {
      throw new StackError(`${process.name} exited before it was ready:\n${process.log()}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      throw new StackError(
        `${process.name} was not ready within ${timeoutMs / 1000} s (${url}):\n${process.log()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A running Collector. */
export interface Collector {
  readonly process: StackProcess;
  /** Its OTLP/HTTP receiver, `http://127.0.0.1:PORT` (the SDK appends `/v1/traces`). */
  readonly otlpHttpUrl: string;
  /** Its OTLP/gRPC receiver, `http://127.0.0.1:PORT`. */
  readonly otlpGrpcUrl: string;
  /** Its health_check extension, `http://127.0.0.1:PORT/`. */
  readonly healthUrl: string;
  /** Its own metrics in Prometheus text (`otelcol_receiver_accepted_spans_total` …). */
  readonly metricsUrl: string;
}

/** Options for {@link startCollector}. */
export interface CollectorOptions {
  /**
   * The config files, merged in order (the Collector's own rule: later maps win, lists are
   * replaced).
   * @default [COLLECTOR_CONFIG]
   */
  configs?: readonly string[];
  /** Inline overrides in the `yaml:` provider's form, e.g. `service::pipelines::traces::exporters: [otlp_grpc/jaeger]`. */
  overrides?: readonly string[];
  /**
   * Environment for the configs' `${env:…}` references. The receivers' and health check's
   * addresses (`OTELCOL_OTLP_GRPC_ENDPOINT`, `OTELCOL_OTLP_HTTP_ENDPOINT`,
   * `OTELCOL_HEALTH_ENDPOINT`) are set to free ports unless given here.
   */
  env?: Record<string, string>;
  /** Fixed ports instead of free ones (`npm run stack --` flags); checked free first. */
  ports?: { otlpHttp?: number; otlpGrpc?: number; health?: number; metrics?: number };
  /** @default 'collector' */
  name?: string;
}

/**
 * Starts the built Collector with the repo's config (or `options.configs`) on 127.0.0.1 ports,
 * its own telemetry on a free port instead of the fixed 8888, and resolves once its health check
 * says it serves.
 */
export async function startCollector(
  binary: string,
  options: CollectorOptions = {},
): Promise<Collector> {
  const name = options.name ?? 'collector';
  const otlpHttp = await portFor(options.ports?.otlpHttp, `${name} OTLP/HTTP`);
  const otlpGrpc = await portFor(options.ports?.otlpGrpc, `${name} OTLP/gRPC`);
  const health = await portFor(options.ports?.health, `${name} health check`);
  const metrics = await portFor(options.ports?.metrics, `${name} own metrics`);
  const args: string[] = [];
  for (const config of options.configs ?? [COLLECTOR_CONFIG]) args.push(`--config=${config}`);
  const overrides = [
    `service::telemetry::metrics::readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: ${metrics}}}}}]`,
    ...(options.overrides ?? []),
  ];
  for (const override of overrides) args.push(`--config=yaml:${override}`);
  const process = startProcess(name, binary, args, {
    OTELCOL_OTLP_GRPC_ENDPOINT: `127.0.0.1:${otlpGrpc}`,
    OTELCOL_OTLP_HTTP_ENDPOINT: `127.0.0.1:${otlpHttp}`,
    OTELCOL_HEALTH_ENDPOINT: `127.0.0.1:${health}`,
    ...options.env,
  });
  const healthUrl = `http://127.0.0.1:${health}/`;
  try {
    await waitUntilReady(process, healthUrl);
  } catch (error) {
    await process.stop();
    throw error;
  }
  return {
    process,
    otlpHttpUrl: `http://127.0.0.1:${otlpHttp}`,
    otlpGrpcUrl: `http://127.0.0.1:${otlpGrpc}`,
    healthUrl,
    metricsUrl: `http://127.0.0.1:${metrics}/metrics`,
  };
}

/** A running Jaeger v2 (in-memory storage). */
export interface Jaeger {
  readonly process: StackProcess;
  /** Its query API and UI, `http://127.0.0.1:PORT`. */
  readonly queryUrl: string;
  /** Its OTLP/gRPC receiver as a Collector exporter names it, `127.0.0.1:PORT`. */
  readonly otlpGrpcEndpoint: string;
  /** Its OTLP/HTTP receiver, `http://127.0.0.1:PORT`. */
  readonly otlpHttpUrl: string;
}

/**
 * Starts the built Jaeger with scripts/stack/jaeger.yaml on free ports; resolves once ready.
 * `options.env` is added to its environment.
 */
export async function startJaeger(
  binary: string,
  options: { queryPort?: number; name?: string; env?: Record<string, string> } = {},
): Promise<Jaeger> {
  const name = options.name ?? 'jaeger';
  const query = await portFor(options.queryPort, `${name} query API`);
  const [queryGrpc, health, otlpGrpc, otlpHttp] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const process = startProcess(
    name,
    binary,
    [`--config=${join(ROOT, 'scripts/stack/jaeger.yaml')}`],
    {
      JAEGER_QUERY_HTTP_ENDPOINT: `127.0.0.1:${query}`,
      JAEGER_QUERY_GRPC_ENDPOINT: `127.0.0.1:${queryGrpc}`,
      JAEGER_HEALTH_ENDPOINT: `127.0.0.1:${health}`,
      JAEGER_OTLP_GRPC_ENDPOINT: `127.0.0.1:${otlpGrpc}`,
      JAEGER_OTLP_HTTP_ENDPOINT: `127.0.0.1:${otlpHttp}`,
      ...options.env,
    },
  );
  try {
    await waitUntilReady(process, `http://127.0.0.1:${health}/status`);
    await waitUntilReady(process, `http://127.0.0.1:${query}/api/services`);
  } catch (error) {
    await process.stop();
    throw error;
  }
  return {
    process,
    queryUrl: `http://127.0.0.1:${query}`,
    otlpGrpcEndpoint: `127.0.0.1:${otlpGrpc}`,
    otlpHttpUrl: `http://127.0.0.1:${otlpHttp}`,
  };
}

/** A running Prometheus with its OTLP receiver on. */
export interface Prometheus {
  readonly process: StackProcess;
  /** Its HTTP API, `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The base URL a Collector's `otlp_http` exporter sends metrics to (`…/api/v1/otlp`). */
  readonly otlpUrl: string;
}

/**
 * Starts the built Prometheus with deploy/prometheus/prometheus.yml (the compose stack's), its
 * storage in a temporary folder removed on stop; resolves once `/-/ready` answers.
 */
export async function startPrometheus(
  binary: string,
  options: { port?: number; name?: string } = {},
): Promise<Prometheus> {
  const name = options.name ?? 'prometheus';
  const port = await portFor(options.port, `${name} HTTP API`);
  const storage = mkdtempSync(join(tmpdir(), 'tooltrace-stack-prometheus-'));
  const process = startProcess(
    name,
    binary,
    [
      `--config.file=${join(ROOT, 'deploy/prometheus/prometheus.yml')}`,
      `--storage.tsdb.path=${storage}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-otlp-receiver',
      '--log.level=warn',
    ],
    {},
    [storage],
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(process, `${url}/-/ready`);
  } catch (error) {
    await process.stop();
    throw error;
  }
  return { process, url, otlpUrl: `${url}/api/v1/otlp` };
}

async function portFor(port: number | undefined, what: string): Promise<number> {
  if (port === undefined) return freePort();
  await assertPortFree(port, what);
  return port;
}

/** The three programs of `npm run stack`, wired as compose wires them (Tempo left out). */
export interface Stack {
  readonly collector: Collector;
  readonly jaeger: Jaeger;
  readonly prometheus: Prometheus;
  /** The lines `npm run stack` prints, `NAME=URL` each. */
  readonly lines: readonly string[];
  /** Stops all three (the Collector first, so it can flush) and removes their folders. */
  stop(): Promise<void>;
}

/** Fixed ports for {@link startStack}; each is checked free first. */
export interface StackPorts {
  otlpHttp?: number;
  otlpGrpc?: number;
  jaeger?: number;
  prometheus?: number;
}

/**
 * Starts Jaeger and Prometheus, then the Collector with the repo's otel-collector-config.yaml
 * pointed at them (through its `${env:…}` endpoints). Tempo is not built (AGPL), so the traces
 * pipeline exports to Jaeger alone. Whatever started is stopped when a later part fails.
 */
export async function startStack(binaries: StackBinaries, ports: StackPorts = {}): Promise<Stack> {
  const started: StackProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const process of started.splice(0).reverse()) await process.stop();
  };
  try {
    // Fixed ports are checked before anything starts, so a taken one fails at once.
    for (const [what, port] of Object.entries(ports) as [string, number | undefined][]) {
      if (port !== undefined) await assertPortFree(port, what);
    }
    const jaeger = await startJaeger(binaries.jaeger, { queryPort: ports.jaeger });
    started.push(jaeger.process);
    const prometheus = await startPrometheus(binaries.prometheus, { port: ports.prometheus });
    started.push(prometheus.process);
    const collector = await startCollector(binaries.collector, {
      ports: { otlpHttp: ports.otlpHttp, otlpGrpc: ports.otlpGrpc },
      env: {
        JAEGER_OTLP_ENDPOINT: jaeger.otlpGrpcEndpoint,
        PROMETHEUS_OTLP_ENDPOINT: prometheus.otlpUrl,
      },
      overrides: ['service::pipelines::traces::exporters: [otlp_grpc/jaeger]'],
    });
    started.push(collector.process);
    return {
      collector,
      jaeger,
      prometheus,
      lines: [
        `OTEL_EXPORTER_OTLP_ENDPOINT=${collector.otlpHttpUrl}`,
        `OTLP_GRPC_ENDPOINT=${collector.otlpGrpcUrl}`,
        `JAEGER_URL=${jaeger.queryUrl}`,
        `PROMETHEUS_URL=${prometheus.url}`,
      ],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Runs the built Collector's `validate` on `config` (with `env` for its `${env:…}` references):
 * resolves to its exit code and output.
 */
export async function validateCollectorConfig(
  binary: string,
  config: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const child = spawn(binary, ['validate', `--config=${config}`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}

/** A tag or a log field as Jaeger's query API gives it. */
export interface JaegerKeyValue {
  key: string;
  type: string;
  value: string | number | boolean;
}

/** A span as Jaeger's query API (`/api/traces`) gives it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  startTime: number;
  duration: number;
  tags: JaegerKeyValue[];
  logs: { timestamp: number; fields: JaegerKeyValue[] }[];
  processID: string;
}

/** A trace as Jaeger's query API gives it. */
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: JaegerKeyValue[] }>;
}

/** The value of a span's tag (or a log's field) `key`, if it has one. */
export function tagOf(
  item: { tags?: JaegerKeyValue[]; fields?: JaegerKeyValue[] },
  key: string,
): string | number | boolean | undefined {
  return (item.tags ?? item.fields ?? []).find((entry) => entry.key === key)?.value;
}

/** The id of a span's parent (its CHILD_OF reference), if it has one. */
export function parentOf(span: JaegerSpan): string | undefined {
  return span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;
}

/** Jaeger's HTTP query API: what it stores, read back as the UI reads it. */
export class JaegerQuery {
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  async #get(path: string): Promise<unknown> {
    const response = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(10_000) });
    const body = (await response.json()) as { data?: unknown; errors?: unknown };
    if (!response.ok) {
      throw new StackError(`Jaeger ${path}: ${response.status} ${JSON.stringify(body.errors)}`);
    }
    return body.data;
  }

  /** The service names it has spans of. */
  async services(): Promise<string[]> {
    return ((await this.#get('/api/services')) as string[] | null) ?? [];
  }

  /**
   * The traces of `service` in the last hour (up to `limit`), only those with a span carrying
   * every tag of `tags` when given (Jaeger's tag search). With `raw`, as stored: Jaeger's
   * adjusters, which fold identical copies of a span into one among other things, are skipped,
   * so a span stored twice comes back twice.
   */
  async traces(
    service: string,
    options: { tags?: Record<string, string>; limit?: number; raw?: boolean } = {},
  ): Promise<JaegerTrace[]> {
    const query = new URLSearchParams({
      service,
      lookback: '1h',
      limit: String(options.limit ?? 1000),
    });
    if (options.tags !== undefined) query.set('tags', JSON.stringify(options.tags));
    if (options.raw === true) query.set('raw', 'true');
    return ((await this.#get(`/api/traces?${query.toString()}`)) as JaegerTrace[] | null) ?? [];
  }

  /** One trace by id (32 hex), or `undefined` when Jaeger has none. */
  async trace(traceId: string): Promise<JaegerTrace | undefined> {
    const response = await fetch(`${this.url}/api/traces/${traceId}`, {
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status === 404) return undefined;
    const body = (await response.json()) as { data?: JaegerTrace[] };
    return body.data?.[0];
  }
}

/** One sample of an instant PromQL query's vector. */
export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Prometheus's HTTP API: an instant query, and the names it holds. */
export class PrometheusQuery {
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  /** The result vector of `promql` evaluated now. Throws on a query Prometheus refuses. */
  async query(promql: string): Promise<PromSample[]> {
    const response = await fetch(`${this.url}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: promql }).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: PromSample[] };
    };
    if (body.status !== 'success') throw new StackError(`PromQL ${promql}: ${body.error}`);
    return body.data?.resultType === 'vector' ? body.data.result : [];
  }

  /** Every metric name it stores. */
  async names(): Promise<string[]> {
    const response = await fetch(`${this.url}/api/v1/label/__name__/values`, {
      signal: AbortSignal.timeout(10_000),
    });
    return ((await response.json()) as { data: string[] }).data;
  }
}

/**
 * Calls `probe` every 250 ms until it gives something other than `undefined`, and resolves to it;
 * rejects after `timeoutMs` with `what` and the last value's description.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new StackError(
        `${what}: not within ${timeoutMs / 1000} s${lastError instanceof Error ? ` (${lastError.message})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
