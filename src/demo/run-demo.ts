import { counted } from '../errors/index.js';
import { setTimeout as delay } from 'node:timers/promises';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EventBus } from '../bus/index.js';
import { traceReplay } from '../otel/index.js';
import { forwardEventsWorded } from '../forward/forward-events.js';
import { InFlightSnapshots, renderWaterfall, terminalWidth } from '../view/index.js';
import { checkSidecarUrl } from '../forward/forward-events.js';
import {
  ConsoleSpanExporter,
  OtlpFileExporter,
  ReliableSpanProcessor,
  resolveExporterSelection,
} from '../sidecar/export/index.js';
import { printable } from '../sidecar/pipeline/index.js';
import { DEMO_CALL_COUNT, DEMO_CALLS, DEMO_SPAN_COUNT, runDemoAgent } from './demo-agent.js';
import { demoPace } from './demo-pace.js';
import { LiveDisplay } from './live-display.js';
import { startTraceSink } from './trace-sink.js';
import { ToolTable } from './tool-table.js';

/** What a refusal of the demo's --forward tells its user to check: what the command reads. */
const DEMO_WORDING = {
  token:
    "TOOLTRACE_TOKEN: the demo sends it as its bearer token; it must be one the sidecar's --token takes",
  url: '--forward',
} as const;

/** How long the demo waits at the end for the sidecar to take the events it forwarded. */
const FORWARD_CLOSE_MS = 10_000;

/** Options for {@link runDemo}; the `tooltrace demo` flags map onto these. */
export interface DemoOptions {
  /** Run the scenario about fifty times faster (for tests). @default false */
  fast?: boolean;
  /** Colour and redraw in place. @default whether stdout is a terminal */
  color?: boolean;
  /**
   * Write what was exported as OTLP JSON lines to this file, with the sidecar's writer.
   * @default process.env.TOOLTRACE_OUT
   */
  out?: string;
  /** Also send the events to a sidecar at this URL (`tooltrace sidecar --listen`). */
  forward?: string;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Spans a processor for the end of the run holds before it writes them anyway. */
const HELD_TO_THE_END = { batchSize: 100_000, scheduleDelayMs: 2_147_483_647 };

/**
 * `tooltrace demo`: runs a scripted agent whose tools stream, fail, get cancelled, nest and run
 * in a sub-agent; shows them live; then draws the trace as it was exported over OTLP. It honours
 * the sidecar's exporter variables: `OTEL_TRACES_EXPORTER` (`otlp` sends to
 * `OTEL_EXPORTER_OTLP_ENDPOINT` when one is set, as before; `console` prints each span after
 * the drawing; `none` sends nowhere but the embedded receiver the drawing is made from),
 * `OTEL_SDK_DISABLED=true` (the same as `none`, and no `--out`), and writes `--out` with the
 * sidecar's OTLP JSON lines writer.
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  const env = options.env ?? process.env;
  const color = options.color ?? false;
  if (options.forward !== undefined) {
    // Before anything runs: a URL no send can use would fail only after the whole demo.
    try {
      checkSidecarUrl(options.forward);
    } catch (error) {
      options.stderr.write(`tooltrace demo: --forward: ${(error as Error).message}\n`);
      return 2;
    }
  }
  // The sidecar's rules: with --out, spans go to an OTLP endpoint only when one is set. The
  // embedded receiver the drawing is made from gets them whatever the selection.
  const selection = resolveExporterSelection(env, { out: options.out, command: 'demo' });
  for (const notice of selection.notices) options.stderr.write(`tooltrace demo: ${notice}\n`);
  const file =
    selection.outFile === undefined
      ? undefined
      : new ReliableSpanProcessor(
          await OtlpFileExporter.open({ path: selection.outFile, maxBytes: 0 }),
          HELD_TO_THE_END,
        );
  const printer = selection.traces.has('console')
    ? new ReliableSpanProcessor(new ConsoleSpanExporter(options.stdout, printable), HELD_TO_THE_END)
    : undefined;
  const processors = [file, printer].filter(
    (processor): processor is ReliableSpanProcessor => processor !== undefined,
  ) satisfies SpanProcessor[];
  const sink = await startTraceSink({
    env,
    serviceName: 'tooltrace-demo',
    exportElsewhere: selection.traces.has('otlp'),
    processors,
  });
  const bus = new EventBus();
  const table = new ToolTable();
  // The replay form, for its derived ids: they let one trace hold the whole session.
  const tracing = traceReplay(bus, {
    tracerProvider: sink.tracerProvider,
    meterProvider: table.meterProvider,
    idGenerator: sink.idGenerator,
    // One trace for the whole session, under its root span, as the Go original draws it.
    traceBy: 'session',
  });
  const stderr = options.stderr;
  const forwarder =
    options.forward === undefined
      ? undefined
      : forwardEventsWorded(
          bus,
          {
            url: options.forward,
            // Said as it happens (a sidecar that is not there, within a second); a give-up is
            // said by the summary below, with every count.
            onError: (error) => {
              if (error.kind !== 'gave-up')
                stderr.write(`tooltrace demo: --forward: ${error.message}\n`);
            },
          },
          // The command's user has the variable and the flag, not the library's options.
          DEMO_WORDING,
        );
  const out = options.stdout;
  out.write(
    `tooltrace demo: an agent's turn, a simulated model that asks for ${DEMO_CALLS.length} tools (${DEMO_CALL_COUNT} calls with the nested ones) and a sub-agent.\n` +
      `Spans go over OTLP to the embedded receiver${sink.external === undefined ? '' : ` and to ${sink.external}`}` +
      `${selection.outFile === undefined ? '' : `, and to ${selection.outFile} (OTLP JSON lines)`}` +
      `${options.forward === undefined ? '' : `; events go to the sidecar at ${options.forward}`}.\n\n`,
  );
  const display = new LiveDisplay(bus, { stream: out, live: color, color });
  try {
    await runDemoAgent(bus, demoPace(options.fast === true ? 0.02 : 1));
  } finally {
    display.stop();
  }
  await tracing.shutdown();
  let code = 0;
  try {
    const snapshots = new InFlightSnapshots();
    const spans = (await sink.collect(DEMO_SPAN_COUNT)).filter((span) => !snapshots.take(span));
    out.write(`\nThe trace, drawn from what was exported over OTLP:\n\n`);
    out.write(
      renderWaterfall([...spans, ...snapshots.unended(spans)], {
        color,
        width: terminalWidth(out),
        snapshots: snapshots.count,
      }),
    );
    out.write(
      `\nPer tool, from the metrics the same subscriber recorded (errors: failed calls, not cancelled ones):\n\n`,
    );
    out.write(await table.render());
    if (printer !== undefined) {
      out.write(`\nThe spans, as OTEL_TRACES_EXPORTER=console prints them:\n\n`);
      await printer.forceFlush();
    }
    if (file !== undefined) {
      // A disk that stays full is retried: the demo says what is missing after 10 s.
      await Promise.race([file.forceFlush(), delay(10_000, undefined, { ref: false })]);
      const { exported, dropped } = file.stats();
      if (dropped === 0 && file.pending === 0) {
        out.write(
          `\nWrote ${counted(exported, 'span')} as OTLP JSON to ${selection.outFile} (tooltrace view ${selection.outFile}).\n`,
        );
      } else {
        options.stderr.write(
          `tooltrace demo: ${counted(dropped + file.pending, 'span was', 'spans were')} not written to ${selection.outFile}\n`,
        );
        code = 2;
      }
    }
    if (forwarder !== undefined) {
      const delivered = await forwarder.close(FORWARD_CLOSE_MS);
      const stats = forwarder.stats();
      if (!delivered) {
        const { sent, refused, dropped, abandoned } = stats;
        const total = sent + refused + dropped + abandoned;
        const gaveUp = abandoned > 0 ? ` (gave up after ${FORWARD_CLOSE_MS / 1000} s)` : '';
        options.stderr.write(
          `tooltrace demo: the sidecar did not take every event: ${counted(total, 'event')}, sent ${sent}, refused ${refused}, dropped ${dropped}, abandoned ${abandoned}${gaveUp}${stats.lastError === undefined ? '' : `; last error: ${stats.lastError}`}\n`,
        );
        code = Math.max(code, 1);
      } else {
        out.write(`\nForwarded ${counted(stats.sent, 'event')} to ${options.forward}.\n`);
      }
    }
  } finally {
    await forwarder?.close(0);
    await table.shutdown();
    const external = await sink.close();
    if (external.status === 'success') {
      out.write(`\nExported ${counted(external.exported, 'span')} to ${external.url}.\n`);
    } else if (external.status === 'failure') {
      options.stderr.write(
        `tooltrace demo: ${counted(external.failed, 'span was', 'spans were')} not exported to ${external.url}: ${external.message}\n`,
      );
      code = Math.max(code, 1);
    }
  }
  return code;
}
