import { once } from 'node:events';
import { Child, sleep } from './processes.js';
import { PAUSE, turnLines, type TurnPlan } from './journal.js';

/** Options for {@link startSidecar}. */
export interface StackSidecarOptions {
  /** OTLP endpoint: the HTTP base URL, or the gRPC server address. */
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json' | 'grpc';
  /** `service.name` of its spans: what the Jaeger queries look for. */
  service: string;
  /** Its `--out` file: every span it ended, written as it ends (the ground truth). */
  outFile: string;
  /** @default '60s' */
  shutdownTimeout?: string;
  /** More flags. */
  args?: readonly string[];
}

/**
 * Starts `tooltrace sidecar --stdin` (the built `dist/cli.js`) exporting to `endpoint` and
 * writing every span to `outFile` as well; metrics off (the configs under test carry traces).
 */
export function startSidecar(name: string, options: StackSidecarOptions): Child {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('OTEL_') || key.startsWith('TOOLTRACE_')) delete env[key];
  }
  env.OTEL_METRICS_EXPORTER = 'none';
  return new Child(
    name,
    process.execPath,
    [
      'dist/cli.js',
      'sidecar',
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
      ...(options.args ?? []),
    ],
    env,
  );
}

/** Options for {@link feedTurns}. */
export interface FeedOptions {
  /** Turns started a second. */
  perSecond: number;
  /** Turns whose call stays open this long before its result (in-flight snapshots). */
  slow?: ReadonlySet<TurnPlan>;
  /** @default 1500 */
  slowMs?: number;
  /** Called after each turn is started, with how many were. */
  onProgress?: (started: number) => void;
}

/**
 * Writes `turns` to the sidecar's standard input at `perSecond` (whole lines only, waiting for
 * the pipe to drain), slow turns finishing `slowMs` later while the others go on; resolves once
 * every line is written. Standard input stays open.
 */
export async function feedTurns(
  sidecar: Child,
  turns: readonly TurnPlan[],
  options: FeedOptions,
): Promise<void> {
  const stdin = sidecar.process.stdin!;
  const write = async (text: string): Promise<void> => {
    if (!stdin.write(text)) await once(stdin, 'drain');
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
            sleep(options.slowMs ?? 1500).then(async () => {
              let rest = '';
              for (let more = lines.next(); !more.done; more = lines.next()) {
                if (more.value !== PAUSE) rest += `${more.value}\n`;
              }
              await write(rest);
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
    if (due > Date.now()) await sleep(due - Date.now());
  }
  await Promise.all(finishing);
}

/** Ends the sidecar's input and waits (at most `timeoutMs`) for it to exit; its exit code. */
export async function endInput(sidecar: Child, timeoutMs: number): Promise<number | null> {
  sidecar.process.stdin!.end();
  const timer = setTimeout(() => sidecar.process.kill('SIGKILL'), timeoutMs);
  const { code } = await sidecar.exited;
  clearTimeout(timer);
  return code;
}
