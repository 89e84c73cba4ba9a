import { resourceFromAttributes, defaultResource } from '@opentelemetry/resources';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { EventBus } from '../bus/index.js';
import { ConfigurationError } from '../errors/index.js';
import { DerivedIdGenerator, traceToolCalls, type ToolCallTracing } from '../otel/index.js';
import { CheckpointFile } from './checkpoint-file.js';
import { EventPipeline, type LineSource } from './event-pipeline.js';
import { createTraceExporter, parseKeyValueList, resolveExportConfig } from './export-config.js';
import { FileTailer } from './file-tailer.js';
import { HttpIntake, isLoopbackHost } from './http-intake.js';
import { OffsetPins } from './offset-pins.js';
import { ReliableSpanProcessor } from './reliable-span-processor.js';
import { SidecarMetrics } from './sidecar-metrics.js';
import type { SidecarOptions } from './sidecar-options.js';

/** A running sidecar, from {@link runSidecar}. */
export interface Sidecar {
  /** Base URLs of the `--listen` intakes, with real ports. */
  readonly urls: readonly string[];
  /** Resolves with the exit code once the sidecar has stopped (end of stdin, or {@link stop}). */
  readonly done: Promise<number>;
  /**
   * Stops intake, ends open calls (marked `shutdown`), flushes within the shutdown timeout and
   * saves the checkpoint. Safe to call twice.
   */
  stop(reason?: string): Promise<number>;
  readonly metrics: SidecarMetrics;
}

const DEFAULT_SERVICE_NAME = 'tooltrace-sidecar';

/**
 * Runs the sidecar: reads envelopes from stdin, followed files and HTTP, replays them onto its
 * own {@link EventBus}, traces them with the same `traceToolCalls` subscriber as library mode,
 * and exports OTLP without losing spans. Every bad setting is refused before anything starts,
 * with a {@link ConfigurationError} naming it.
 */
export async function runSidecar(options: SidecarOptions): Promise<Sidecar> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const files = options.files ?? [];
  const listen = (options.listen ?? []).map(parseListenAddress);
  if (options.stdin !== true && files.length === 0 && listen.length === 0) {
    throw new ConfigurationError(
      'give at least one source: --stdin, --file PATH or --listen HOST:PORT',
      {
        setting: 'sources',
      },
    );
  }
  if (options.checkpoint !== undefined && files.length !== 1) {
    throw new ConfigurationError(
      '--checkpoint needs exactly one --file to record the position of',
      {
        setting: '--checkpoint',
      },
    );
  }
  const token = options.token ?? nonEmpty(env.TOOLTRACE_TOKEN);
  for (const address of listen) {
    if (token === undefined && !isLoopbackHost(address.host)) {
      throw new ConfigurationError(
        `--listen ${address.host}:${address.port} is reachable from other machines: set a bearer token with --token or TOOLTRACE_TOKEN`,
        { setting: '--token' },
      );
    }
  }
  const exportConfig = resolveExportConfig(
    {
      ...(options.otlpEndpoint === undefined ? {} : { endpoint: options.otlpEndpoint }),
      ...(options.otlpProtocol === undefined ? {} : { protocol: options.otlpProtocol }),
      ...(options.otlpHeaders === undefined ? {} : { headers: options.otlpHeaders }),
      ...(options.otlpCompression === undefined ? {} : { compression: options.otlpCompression }),
    },
    env,
  );
  const resourceAttributes = parseKeyValueList(
    env.OTEL_RESOURCE_ATTRIBUTES,
    'OTEL_RESOURCE_ATTRIBUTES',
  );
  const serviceName =
    options.serviceName ??
    nonEmpty(env.OTEL_SERVICE_NAME) ??
    resourceAttributes['service.name'] ??
    DEFAULT_SERVICE_NAME;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;

  const metrics = new SidecarMetrics();
  const pins = new OffsetPins();
  let exportFailing = false;
  const processor = new ReliableSpanProcessor(createTraceExporter(exportConfig), {
    maxQueueSpans: options.maxQueueSpans ?? 50_000,
    onExported: (spans, latencyMs) => {
      metrics.exported(spans.length, latencyMs);
      for (const span of spans) {
        const eventId = span.attributes['tooltrace.event.id'];
        if (typeof eventId === 'string') pins.unpin(eventId);
      }
      if (exportFailing) {
        exportFailing = false;
        log(`tooltrace sidecar: export to ${exportConfig.tracesUrl} works again`);
      }
      resumeIntake();
    },
    onFailed: (error, spans) => {
      metrics.exportFailed(spans);
      if (!exportFailing) {
        exportFailing = true;
        log(
          `tooltrace sidecar: export to ${exportConfig.tracesUrl} failed (${error?.message ?? 'unknown error'}); retrying, nothing is dropped`,
        );
      }
    },
  });
  const idGenerator = new DerivedIdGenerator();
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ ...resourceAttributes, 'service.name': serviceName }),
    ),
    idGenerator,
    spanProcessors: [processor],
  });

  const bus = new EventBus({ ringSize: 0 });
  const pipeline = new EventPipeline({ bus, metrics, maxLineBytes });
  const tracing: ToolCallTracing = traceToolCalls(bus, {
    tracerProvider: provider,
    idGenerator,
    stableEventId: pipeline.stableEventId,
    parentContext: pipeline.parentContext,
    ...(options.captureContent === undefined ? {} : { captureContent: options.captureContent }),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
  });
  metrics.setGauges({
    openSpans: () => tracing.stats().openSpans,
    queueDepth: () => processor.pending,
    pinnedCalls: () => pins.size,
  });

  let stopping: Promise<number> | undefined;
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  const isFull = (): boolean => processor.full;

  // Sources.
  const tailers: FileTailer[] = [];
  let checkpointFile: CheckpointFile | undefined;
  let fileSource: LineSource | undefined;
  let fileTailer: FileTailer | undefined;
  for (const path of files) {
    let start: { offset: number; inode: number } | undefined;
    if (options.checkpoint !== undefined) {
      checkpointFile = new CheckpointFile(options.checkpoint);
      const saved = await checkpointFile.read();
      if (saved !== undefined && saved.path === path) {
        start = { offset: saved.offset, inode: saved.inode };
        log(`tooltrace sidecar: resuming ${path} at byte ${saved.offset}`);
      }
    }
    let source = pipeline.source('file', {
      startOffset: start?.offset ?? 0,
      ...(options.checkpoint === undefined ? {} : { pins }),
    });
    const tailer = new FileTailer({
      path,
      ...(start === undefined ? {} : { startOffset: start.offset, startInode: start.inode }),
      onData: (chunk) => source.push(chunk),
      onReset: (reason) => {
        source.end();
        log(`tooltrace sidecar: ${path} was ${reason}; reading it from the start`);
        if (options.checkpoint !== undefined) pins.clear();
        source = pipeline.source('file', options.checkpoint === undefined ? {} : { pins });
        if (fileTailer === tailer) fileSource = source;
      },
      isPaused: isFull,
      onError: (error) => log(`tooltrace sidecar: cannot read ${path}: ${String(error)}`),
    });
    tailers.push(tailer);
    if (options.checkpoint !== undefined) {
      fileTailer = tailer;
      fileSource = source;
    }
  }

  const intakes: HttpIntake[] = [];
  try {
    for (const address of listen) {
      intakes.push(
        await HttpIntake.start({
          host: address.host,
          port: address.port,
          token,
          ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
          ingest: (body) => pipeline.ingestBody(body, 'http'),
          isFull,
          isReady: () => stopping === undefined,
          renderMetrics: () => metrics.render(),
        }),
      );
    }
  } catch (error) {
    await Promise.all(intakes.map((intake) => intake.close()));
    await tracing.shutdown();
    throw new ConfigurationError(`cannot listen: ${(error as Error).message}`, {
      setting: '--listen',
      cause: error,
    });
  }
  for (const tailer of tailers) tailer.start();

  const saveCheckpoint = async (): Promise<void> => {
    if (checkpointFile === undefined || fileTailer === undefined || fileSource === undefined)
      return;
    if (fileTailer.inode === -1) return;
    const offset = Math.min(pins.lowest() ?? Number.POSITIVE_INFINITY, fileSource.lineEnd);
    await checkpointFile.write({ path: files[0]!, inode: fileTailer.inode, offset });
  };
  let checkpointTimer: NodeJS.Timeout | undefined;
  if (checkpointFile !== undefined) {
    checkpointTimer = setInterval(() => {
      saveCheckpoint().catch((error: unknown) =>
        log(`tooltrace sidecar: checkpoint: ${String(error)}`),
      );
    }, options.checkpointIntervalMs ?? 1000);
    checkpointTimer.unref();
  }

  const input = options.input ?? process.stdin;
  let inputPaused = false;
  function resumeIntake(): void {
    if (processor.full) return;
    for (const tailer of tailers) tailer.poke();
    if (inputPaused) {
      inputPaused = false;
      input.resume();
    }
  }
  if (options.stdin === true) {
    const source = pipeline.source('stdin');
    input.on('data', (chunk: Buffer | string) => {
      source.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (processor.full && !inputPaused) {
        inputPaused = true;
        input.pause();
      }
    });
    input.once('end', () => {
      source.end();
      if (files.length === 0 && listen.length === 0) {
        void stop('end of input', Number.POSITIVE_INFINITY);
      }
    });
    input.once('error', (error) => log(`tooltrace sidecar: stdin: ${String(error)}`));
  }

  const status = (): string => {
    const snapshot = metrics.snapshot();
    const rejected = Object.values(snapshot.rejected).reduce((sum, count) => sum + count, 0);
    const stats = tracing.stats();
    return `tooltrace sidecar: ${snapshot.received} events, ${rejected} rejected, ${stats.openSpans} calls open, ${snapshot.spansExported} spans exported, ${processor.pending} waiting`;
  };
  let statusTimer: NodeJS.Timeout | undefined;
  const statusIntervalMs = options.statusIntervalMs ?? 10_000;
  if (statusIntervalMs > 0) {
    let last = '';
    statusTimer = setInterval(() => {
      const line = status();
      if (line !== last) log(line);
      last = line;
    }, statusIntervalMs);
    statusTimer.unref();
  }

  for (const intake of intakes) log(`tooltrace sidecar: listening on ${intake.url}`);
  log(
    `tooltrace sidecar: exporting to ${exportConfig.tracesUrl} (${exportConfig.protocol}) as ${serviceName}`,
  );

  function stop(reason = 'stopped', timeoutMs = shutdownTimeoutMs): Promise<number> {
    stopping ??= (async () => {
      log(`tooltrace sidecar: ${reason}; ending open calls and flushing`);
      await Promise.all(intakes.map((intake) => intake.close()));
      await Promise.all(tailers.map((tailer) => tailer.stop()));
      if (options.stdin === true) input.pause();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        if (Number.isFinite(timeoutMs)) {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
          timer.unref();
        }
      });
      const outcome = await Promise.race([
        (async () => {
          await tracing.shutdown();
          await processor.forceFlush();
          return 'flushed' as const;
        })(),
        deadline,
      ]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        log(
          `tooltrace sidecar: shutdown timeout: ${processor.pending} spans were not exported` +
            (checkpointFile === undefined ? '' : '; the checkpoint stays before them'),
        );
      }
      if (checkpointTimer !== undefined) clearInterval(checkpointTimer);
      if (statusTimer !== undefined) clearInterval(statusTimer);
      await saveCheckpoint().catch((error: unknown) =>
        log(`tooltrace sidecar: checkpoint: ${String(error)}`),
      );
      await processor.shutdown(0).catch(() => undefined);
      log(status());
      resolveDone(0);
      return 0;
    })();
    return stopping;
  }

  return { urls: intakes.map((intake) => intake.url), done, stop, metrics };
}

/** Parses `HOST:PORT` (IPv6 as `[::1]:PORT`). */
function parseListenAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65_535) {
    throw new ConfigurationError(
      `--listen '${text}' is not HOST:PORT (for example 127.0.0.1:4319)`,
      {
        setting: '--listen',
      },
    );
  }
  return { host: match[1] ?? match[2]!, port };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
