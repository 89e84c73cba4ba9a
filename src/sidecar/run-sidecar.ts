import { EventBus } from '../bus/index.js';
import { Deadline } from './deadline.js';
import { noticeSlowFinalExport } from './export/final-export-notice.js';
import { resolveMetricsExport, startMetricsExport, startSpanExport } from './export/index.js';
import { Intakes } from './intake/index.js';
import {
  detectResource,
  EventPipeline,
  SidecarMetrics,
  traceSidecarBus,
  withoutUrlCredentials,
} from './pipeline/index.js';
import { VERSION } from '../version.js';
import type { SidecarOptions } from './sidecar-options.js';
import { resolveSidecarSettings } from './sidecar-settings.js';
import { exitCodeFor } from './sidecar-exit-code.js';
import { shutDownSidecar } from './sidecar-shutdown.js';
import { printable } from './pipeline/index.js';
import { SidecarStatus } from './sidecar-status.js';

/** A running sidecar, from {@link runSidecar}. */
export interface Sidecar {
  /** Base URLs of the `--listen` intakes, with real ports. */
  readonly urls: readonly string[];
  /**
   * Resolves with the exit code once the sidecar has stopped (end of stdin, or {@link stop}):
   * one of {@link SIDECAR_EXIT_CODE}, never 0 when spans were lost.
   */
  readonly done: Promise<number>;
  /**
   * Stops intake, ends open calls (marked `shutdown`), flushes within `timeoutMs` (default: the
   * shutdown timeout) and saves the checkpoint; resolves with the exit code. Safe to call twice:
   * a second call can only shorten the deadline.
   */
  stop(reason?: string, timeoutMs?: number): Promise<number>;
  readonly metrics: SidecarMetrics;
  /** Spans ended and not exported yet (queued, waiting for a retry, or in flight). */
  readonly pendingSpans: number;
  /**
   * Reads `--token-file` again (the CLI calls it on SIGHUP) and logs the outcome; a bad file
   * leaves the tokens in use.
   */
  reloadTokens(): Promise<void>;
}

/**
 * Runs the sidecar: intake (stdin, followed files, HTTP) feeds the pipeline, which replays
 * envelopes onto the sidecar's own {@link EventBus} and traces them with the same
 * `traceToolCalls` subscriber as library mode; export sends the spans over OTLP without losing
 * any. Every bad setting is refused before anything starts, with a `ConfigurationError`.
 */
export async function runSidecar(options: SidecarOptions): Promise<Sidecar> {
  const settings = resolveSidecarSettings(options);
  const metricsConfig = resolveMetricsExport(
    options.env ?? process.env,
    settings.exportConfig.tracesUrl,
    settings.exportConfig.protocol,
    settings.exporters.metrics,
  );
  const sink = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  // Lines carry input (tool names, paths, an endpoint's error text): one line, escaped, bounded.
  const log = (line: string): void => sink(printable(withoutUrlCredentials(line)));
  const checkpointing = settings.checkpoint !== undefined;
  const metrics = new SidecarMetrics();
  // Replayed events carry their causation: no dispatch frame is needed to give them any.
  const bus = new EventBus({ ringSize: 0, dispatchFrames: false });
  const pipeline = new EventPipeline({ bus, metrics, maxLineBytes: settings.maxLineBytes, log });
  const stdout = options.stdout ?? process.stdout;
  const { traces, outFile } = settings.exporters;
  const spanExport = await startSpanExport({
    config: settings.exportConfig,
    exporters: {
      otlp: traces.has('otlp'),
      console: traces.has('console') ? { stream: stdout, escape: printable } : undefined,
      file:
        outFile === undefined
          ? undefined
          : {
              path: outFile,
              maxBytes: settings.out.maxBytes,
              maxBackups: settings.out.backups,
              // A run resuming from its checkpoint continues the file of the run before.
              append: checkpointing,
              log,
            },
    },
    maxQueueSpans: settings.maxQueueSpans,
    metrics,
    log,
    ...(checkpointing
      ? {
          onSpanStarted: (span) => pipeline.spanStarted(span),
          onSpanEnded: (span) => pipeline.spanEnded(span),
          onSpanDone: (receipt) => pipeline.spanExported(receipt),
        }
      : {}),
    onBatchExported: () => {
      if (!processor.full) intakes?.resume();
    },
  });
  const { processor } = spanExport;
  const resource = await detectResource(settings.resourceAttributes);
  const metricsExport =
    metricsConfig === undefined
      ? undefined
      : await startMetricsExport({
          config: metricsConfig,
          headers: settings.exportConfig.headers,
          resource,
          console: { stream: stdout, escape: printable },
          observe: (provider) => metrics.observe(provider.getMeter('tooltrace.sidecar', VERSION)),
          log,
        });
  const tracing = traceSidecarBus({
    bus,
    pipeline,
    processor,
    resource,
    meterProvider: metricsExport?.meterProvider,
    ...settings.tracing,
    // Only a followed file with a checkpoint is read again from before its open calls: there a
    // call open at shutdown is cut (its snapshot exported) for the next run to end. Anything
    // else (--stdin, --listen, a file without a checkpoint) is ended now, marked shutdown.
    resumable: settings.checkpoint !== undefined,
  });
  let intakes: Intakes | undefined;
  let stopping: Promise<number> | undefined;
  try {
    intakes = await Intakes.open({
      ...settings.intake,
      pipeline,
      isFull: () => processor.full,
      isReady: () => stopping === undefined && !metrics.exportFailing,
      heldEvents: () => tracing.stats().heldEvents,
      renderMetrics: () => metrics.render(),
      metrics,
      onOnlyInputEnded: () => void stop('end of input'),
      log,
    });
  } catch (error) {
    await tracing.shutdown();
    await processor.shutdown(0);
    await metricsExport?.shutdown(0);
    throw error;
  }
  const parts = { metrics, intakes, tracing, processor, checkpointing, log };
  const status = new SidecarStatus(parts, settings.statusIntervalMs);
  for (const notice of settings.exporters.notices) log(`tooltrace sidecar: ${notice}`);
  if (ignoresEnvToken(options)) {
    log(
      'tooltrace sidecar: --token given, so TOOLTRACE_TOKEN is not used: a client sending its secret is refused',
    );
  }
  if (settings.exporters.sdkDisabled) {
    log(
      'tooltrace sidecar: OTEL_SDK_DISABLED=true: exporting nothing, neither spans nor metrics; events are still read, checked and counted (/metrics)',
    );
  } else if (!spanExport.exporting) {
    log(
      `tooltrace sidecar: exporting no spans (OTEL_TRACES_EXPORTER=none) as ${settings.serviceName}`,
    );
  } else {
    log(`tooltrace sidecar: exporting to ${spanExport.description} as ${settings.serviceName}`);
  }
  if (metricsExport !== undefined) {
    log(
      metricsExport.otlp
        ? `tooltrace sidecar: metrics to ${metricsExport.url} (${metricsExport.protocol})`
        : `tooltrace sidecar: metrics to ${metricsExport.url}`,
    );
  }
  // A sidecar runs until it is stopped, even while it only waits (for a retry, say).
  const keepAlive = setInterval(() => {}, 1 << 30);
  const deadline = new Deadline();
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (resolveDone = resolve));

  function stop(reason = 'stopped', timeoutMs = settings.shutdownTimeoutMs): Promise<number> {
    deadline.arm(timeoutMs);
    stopping ??= (async () => {
      log(`tooltrace sidecar: ${reason}; ending open calls and flushing`);
      status.pause();
      const undelivered = await shutDownSidecar(parts, deadline, timeoutMs);
      // The final collection: every call measured up to the end goes out.
      if (metricsExport !== undefined) {
        // Spans still retried at the deadline leave the final collection no time at all: that
        // is said as such, not as an endpoint that kept silent.
        const startedLate = deadline.expired;
        const exporting = metricsExport.shutdown(timeoutMs);
        if (metricsExport.otlp)
          noticeSlowFinalExport(metricsExport.url, exporting, deadline.at, log);
        const finished = await deadline.race(exporting);
        const failure = finished
          ? metricsExport.failure
          : startedLate
            ? `the shutdown timeout ran out while spans were being delivered, before they could be sent${metricsExport.failure === undefined ? '' : `; the last export failed: ${metricsExport.failure}`}`
            : 'no answer within the shutdown timeout';
        if (failure !== undefined) {
          log(
            `tooltrace sidecar: the final metrics were not delivered to ${metricsExport.url} (${failure})`,
          );
        }
      }
      status.stop();
      deadline.cancel();
      clearInterval(keepAlive);
      const code = exitCodeFor(
        processor.destinations.map((destination, index) => ({
          ...destination,
          stats: destination.processor.stats(),
          undelivered: undelivered[index]!,
        })),
        log,
      );
      resolveDone(code);
      return code;
    })();
    return stopping;
  }

  const reloadTokens = async (): Promise<void> => {
    try {
      const count = await parts.intakes.reloadTokens();
      log(`tooltrace sidecar: tokens reloaded; ${count} accepted`);
    } catch (error) {
      log(`tooltrace sidecar: tokens not reloaded, the previous ones stay: ${String(error)}`);
    }
  };

  return {
    urls: intakes.urls,
    done,
    stop,
    metrics,
    get pendingSpans() {
      return processor.pending;
    },
    reloadTokens,
  };
}

/**
 * Whether `--token` replaces a different `TOOLTRACE_TOKEN`: a shell that exports it for the agent
 * and starts the sidecar with `--token` has every request refused, which a 401 alone does not
 * explain.
 */
function ignoresEnvToken(options: SidecarOptions): boolean {
  const fromEnv = (options.env ?? process.env).TOOLTRACE_TOKEN?.trim();
  const given = options.tokens ?? [];
  if (fromEnv === undefined || fromEnv === '' || given.length === 0) return false;
  return !given.some((text) => text.trim() === fromEnv);
}
