import { createReadStream, fstatSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { TracerProvider } from '@opentelemetry/api';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { EventBus } from '../bus/index.js';
import { ConfigurationError } from '../errors/index.js';
import { DerivedIdGenerator, traceToolCalls } from '../otel/index.js';
import { Deadline } from './deadline.js';
import { EventPipeline } from './event-pipeline.js';
import { createTraceExporter } from './export-config.js';
import { FollowedFile } from './followed-file.js';
import { HttpIntake } from './http-intake.js';
import { ReliableSpanProcessor } from './reliable-span-processor.js';
import { SidecarMetrics } from './sidecar-metrics.js';
import type { SidecarOptions } from './sidecar-options.js';
import { resolveSidecarSettings } from './sidecar-settings.js';
import { StdinSource } from './stdin-source.js';

/** A running sidecar, from {@link runSidecar}. */
export interface Sidecar {
  /** Base URLs of the `--listen` intakes, with real ports. */
  readonly urls: readonly string[];
  /** Resolves with the exit code once the sidecar has stopped (end of stdin, or {@link stop}). */
  readonly done: Promise<number>;
  /**
   * Stops intake, ends open calls (marked `shutdown`), flushes within `timeoutMs` (default: the
   * shutdown timeout) and saves the checkpoint. Safe to call twice: a second call can only
   * shorten the deadline, which is how a signal bounds the unbounded flush at end of input.
   */
  stop(reason?: string, timeoutMs?: number): Promise<number>;
  readonly metrics: SidecarMetrics;
}

/**
 * Runs the sidecar: reads envelopes from stdin, followed files and HTTP, replays them onto its
 * own {@link EventBus}, traces them with the same `traceToolCalls` subscriber as library mode,
 * and exports OTLP without losing spans. Every bad setting is refused before anything starts,
 * with a {@link ConfigurationError} naming it.
 */
export async function runSidecar(options: SidecarOptions): Promise<Sidecar> {
  const settings = resolveSidecarSettings(options);
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const { exportConfig } = settings;

  const metrics = new SidecarMetrics();
  const bus = new EventBus({ ringSize: 0 });
  const pipeline = new EventPipeline({ bus, metrics, maxLineBytes: settings.maxLineBytes });
  const checkpointing = settings.checkpoint !== undefined;
  let exportFailing = false;
  const processor = new ReliableSpanProcessor(createTraceExporter(exportConfig), {
    maxQueueSpans: settings.maxQueueSpans,
    ...(checkpointing ? { onStart: (span: object) => pipeline.spanStarted(span) } : {}),
    onExported: (spans, latencyMs) => {
      metrics.exported(spans.length, latencyMs);
      if (checkpointing) for (const span of spans) pipeline.spanExported(span);
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
    onRefused: (span, error) => {
      metrics.refused(1);
      log(
        `tooltrace sidecar: ${exportConfig.tracesUrl} refused span ${span.name} (${span.spanContext().spanId}) for good: ${error?.message ?? 'unknown error'}`,
      );
      if (checkpointing) pipeline.spanExported(span);
    },
  });
  const idGenerator = new DerivedIdGenerator();
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes(settings.resourceAttributes)),
    idGenerator,
    spanProcessors: [processor],
  });
  // The subscriber sees a provider without `forceFlush`: it would wait on the processor for as
  // long as the exporter is down, while the sidecar flushes only as long as its deadline allows.
  const tracerProvider: TracerProvider = {
    getTracer: (name, version, tracerOptions) => provider.getTracer(name, version, tracerOptions),
  };
  const tracing = traceToolCalls(bus, {
    tracerProvider,
    idGenerator,
    stableEventId: pipeline.stableEventId,
    parentContext: pipeline.parentContext,
    ...(options.captureContent === undefined ? {} : { captureContent: options.captureContent }),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    ...(options.liveUpdates === undefined ? {} : { liveUpdates: options.liveUpdates }),
    ...(options.liveIntervalMs === undefined ? {} : { liveIntervalMs: options.liveIntervalMs }),
    ...(options.excludeEvents === undefined ? {} : { excludeEvents: options.excludeEvents }),
    ...(options.traceBy === undefined ? {} : { traceBy: options.traceBy }),
    ...(options.agentName === undefined ? {} : { agentName: options.agentName }),
  });

  let stopping: Promise<number> | undefined;
  const isFull = (): boolean => processor.full;
  const files = await Promise.all(
    settings.files.map((path) =>
      FollowedFile.open({
        path,
        pipeline,
        ...(settings.checkpoint === undefined ? {} : { checkpointPath: settings.checkpoint }),
        checkpointIntervalMs: settings.checkpointIntervalMs,
        isPaused: isFull,
        heldEvents: () => tracing.stats().heldEvents,
        log,
      }),
    ),
  );
  metrics.setGauges({
    openSpans: () => tracing.stats().openSpans,
    queueDepth: () => processor.pending,
    pinnedCalls: () => files.reduce((sum, file) => sum + file.pinnedSpans, 0),
  });

  const intakes: HttpIntake[] = [];
  try {
    for (const address of settings.listen) {
      intakes.push(
        await HttpIntake.start({
          host: address.host,
          port: address.port,
          token: settings.token,
          ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
          ingest: (body) => pipeline.ingestBody(body, 'http'),
          isFull,
          isReady: () => stopping === undefined,
          renderMetrics: () => metrics.render(),
        }),
      );
    }
  } catch (error) {
    await Promise.all(intakes.map((intake) => intake.close(0)));
    await tracing.shutdown();
    await processor.shutdown(0);
    throw new ConfigurationError(`cannot listen: ${(error as Error).message}`, {
      setting: '--listen',
      cause: error,
    });
  }

  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  // A sidecar runs until it is stopped, even while it only waits (for a retry, say).
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stdin = settings.stdin
    ? new StdinSource({
        input: options.input ?? standardInput(),
        pipeline,
        isFull,
        log,
        onEnd: () => {
          if (files.length === 0 && intakes.length === 0) {
            void stop('end of input', Number.POSITIVE_INFINITY);
          }
        },
      })
    : undefined;
  for (const file of files) file.start();
  function resumeIntake(): void {
    if (processor.full) return;
    for (const file of files) file.poke();
    stdin?.resume();
  }

  const status = (): string => {
    const snapshot = metrics.snapshot();
    const rejected = Object.values(snapshot.rejected).reduce((sum, count) => sum + count, 0);
    const reasons = Object.entries(snapshot.rejected)
      .map(([reason, count]) => `${reason}=${count}`)
      .join(' ');
    return (
      `tooltrace sidecar: ${snapshot.received} events, ${rejected} rejected${reasons === '' ? '' : ` (${reasons})`}, ` +
      `${tracing.stats().openSpans} calls open, ${snapshot.spansExported} spans exported, ${processor.pending} waiting`
    );
  };
  let statusTimer: NodeJS.Timeout | undefined;
  if (settings.statusIntervalMs > 0) {
    let last = '';
    statusTimer = setInterval(() => {
      const line = status();
      if (line !== last) log(line);
      last = line;
    }, settings.statusIntervalMs);
    statusTimer.unref();
  }

  for (const intake of intakes) log(`tooltrace sidecar: listening on ${intake.url}`);
  log(
    `tooltrace sidecar: exporting to ${exportConfig.tracesUrl} (${exportConfig.protocol}) as ${settings.serviceName}`,
  );

  const deadline = new Deadline();
  function stop(reason = 'stopped', timeoutMs = settings.shutdownTimeoutMs): Promise<number> {
    deadline.arm(timeoutMs);
    stopping ??= (async () => {
      log(`tooltrace sidecar: ${reason}; ending open calls and flushing`);
      // 1. Stop intake: no new connections, no more reading.
      const graceMs = Math.min(1000, timeoutMs);
      await Promise.all([
        ...intakes.map((intake) => intake.close(graceMs)),
        ...files.map((file) => file.stop()),
      ]);
      stdin?.stop();
      for (const intake of intakes) intake.stopIngesting();
      // 2. End open calls (marked shutdown), 3. export everything before the deadline.
      await tracing.shutdown();
      const flushed = await deadline.race(processor.forceFlush());
      if (!flushed) {
        log(
          `tooltrace sidecar: shutdown timeout: ${processor.pending} spans were not exported` +
            (checkpointing ? '; the checkpoint stays before them' : ''),
        );
      }
      if (statusTimer !== undefined) clearInterval(statusTimer);
      // 4. Save the checkpoint: it stays at the first call that was not exported.
      await Promise.all(files.map((file) => file.saveCheckpoint()));
      await deadline.race(processor.shutdown(0).catch(() => undefined));
      log(status());
      deadline.cancel();
      clearInterval(keepAlive);
      resolveDone(0);
      return 0;
    })();
    return stopping;
  }

  return { urls: intakes.map((intake) => intake.url), done, stop, metrics };
}

/** Bytes per read when standard input is a regular file (`tooltrace sidecar --stdin < journal`). */
const FILE_READ_BYTES = 1024 * 1024;

/**
 * Standard input as a stream. When it is a regular file, a file stream that reads 1 MiB at a
 * time rather than `process.stdin`'s 64 KiB: a one-shot export of a journal then takes a sixteenth
 * of the reads and event-loop turns.
 */
function standardInput(): Readable {
  try {
    if (fstatSync(0).isFile()) {
      return createReadStream('', { fd: 0, autoClose: false, highWaterMark: FILE_READ_BYTES });
    }
  } catch {
    // No usable descriptor 0: let process.stdin decide what standard input is.
  }
  return process.stdin;
}
