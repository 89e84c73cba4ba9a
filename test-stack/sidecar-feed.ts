import { once } from 'node:events';
import { startSidecar, type SidecarProcess } from '../test/sidecar/sidecar-process.js';
import { PAUSE, turnLines, type TurnPlan } from './journal.js';

/** Options for {@link startFedSidecar}. */
export interface FedSidecarOptions {
  /** OTLP endpoint: the HTTP base URL, or the gRPC server's `http://host:port`. */
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json' | 'grpc';
  /** `service.name` of its spans: what the Jaeger queries look for. */
  service: string;
  /** Its `--out` file: every span it ended, written as each batch is ready (the ground truth). */
  outFile: string;
  /** @default '60s' */
  shutdownTimeout?: string;
}

/**
 * Starts `tooltrace sidecar --stdin` (the built CLI) exporting to `endpoint` and writing every
 * span to `outFile` as well, its standard input kept open for {@link feedTurns}; metrics off
 * (the Collector configs under test carry traces).
 */
export function startFedSidecar(options: FedSidecarOptions): SidecarProcess {
  return startSidecar(
    [
      '--stdin',
      '--otlp-endpoint',
      options.endpoint,
      '--otlp-protocol',
      options.protocol,
      '--service-name',
      options.service,
      '--out',
      options.outFile,
      '--status-interval',
      '0',
      '--shutdown-timeout',
      options.shutdownTimeout ?? '60s',
    ],
    { env: { OTEL_METRICS_EXPORTER: 'none' }, keepStdinOpen: true },
  );
}

/** Options for {@link feedTurns}. */
export interface FeedOptions {
  /** Turns started a second. */
  perSecond: number;
  /** Turns whose call stays open `slowMs` before its result (in-flight snapshots). */
  slow?: ReadonlySet<TurnPlan>;
  /** @default 1500 */
  slowMs?: number;
  /** Called after each tick's turns were written, with how many were started so far. */
  onProgress?: (started: number) => void;
}

/**
 * Writes `turns` to the sidecar's standard input at `perSecond` (whole lines only, waiting for
 * the pipe to drain), slow turns finishing `slowMs` later while the others go on; resolves once
 * every line is written. Standard input stays open.
 */
export async function feedTurns(
  sidecar: SidecarProcess,
  turns: readonly TurnPlan[],
  options: FeedOptions,
): Promise<void> {
  const stdin = sidecar.child.stdin!;
  const write = async (text: string): Promise<void> => {
    if (text !== '' && !stdin.write(text)) await once(stdin, 'drain');
  };
  const tickMs = 50;
  const perTick = Math.max(1, Math.round((options.perSecond * tickMs) / 1000));
  const finishing: Promise<void>[] = [];
  const started = Date.now();
  for (let index = 0; index < turns.length; index += perTick) {
    let text = '';
    for (const turn of turns.slice(index, index + perTick)) {
      const lines = turnLines(turn, options.slow?.has(turn) ?? false);
      for (let next = lines.next(); !next.done; next = lines.next()) {
        if (next.value === PAUSE) {
          finishing.push(
            new Promise((resolve) => setTimeout(resolve, options.slowMs ?? 1500)).then(() => {
              let rest = '';
              for (let more = lines.next(); !more.done; more = lines.next()) {
                if (more.value !== PAUSE) rest += `${more.value}\n`;
              }
              return write(rest);
            }),
          );
          break;
        }
        text += `${next.value}\n`;
      }
    }
    await write(text);
    options.onProgress?.(Math.min(turns.length, index + perTick));
    const due = started + ((index + perTick) / perTick) * tickMs;
    if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
  }
  await Promise.all(finishing);
}

/**
 * Ends the sidecar's input and waits for it to exit (SIGKILL after `timeoutMs`, so a hung
 * sidecar fails the test instead of hanging it); its exit code.
 */
export async function endInput(sidecar: SidecarProcess, timeoutMs: number): Promise<number | null> {
  sidecar.child.stdin!.end();
  const timer = setTimeout(() => sidecar.child.kill('SIGKILL'), timeoutMs);
  const { code } = await sidecar.exited;
  clearTimeout(timer);
  return code;
}
