import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../../src/testing/index.js';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** How a sidecar child process ended. */
export interface SidecarExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options for {@link startSidecar}. */
export interface SidecarProcessOptions {
  /** Extra environment variables (over a copy of the test's, minus `OTEL_*` and `TOOLTRACE_*`). */
  env?: Record<string, string>;
  /** Text or bytes written to its standard input, which is then closed. */
  input?: string | Uint8Array;
  /** Keep standard input open (write to `child.stdin` yourself). */
  keepStdinOpen?: boolean;
}

/** A `tooltrace sidecar` child process, as a user would run it. */
export interface SidecarProcess {
  readonly child: ChildProcess;
  /** Everything written to standard error so far. */
  stderr(): string;
  /** Everything written to standard output so far (`OTEL_TRACES_EXPORTER=console`). */
  stdout(): string;
  /** Resolves once standard error matches `pattern`; rejects after `timeoutMs`. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when the process exited. */
  readonly exited: Promise<SidecarExit>;
  /** The `--listen` URL it printed (the first one, or the `index`th). */
  listenUrl(index?: number): Promise<string>;
}

const running = new Set<ChildProcess>();

/**
 * Spawns the real CLI as built — `node dist/cli.js sidecar …args` (Vitest's global setup builds
 * `dist`) — with a clean OTel environment plus `options.env`, and collects its standard error.
 * Every process started is killed by {@link killSidecars} (call it in `afterEach`).
 */
export function startSidecar(args: string[], options: SidecarProcessOptions = {}): SidecarProcess {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('OTEL_') && !name.startsWith('TOOLTRACE_')) {
      env[name] = value;
    }
  }
  Object.assign(env, options.env);
  const child = spawn(process.execPath, ['dist/cli.js', 'sidecar', ...args], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => (stdout += text));
  const listeners = new Set<() => void>();
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderr += text;
    for (const listener of listeners) listener();
  });
  const exited = new Promise<SidecarExit>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
      for (const listener of listeners) listener();
    });
  });
  child.stdin.on('error', () => {});
  if (options.input !== undefined) child.stdin.end(options.input);
  else if (options.keepStdinOpen !== true) child.stdin.end();

  const waitForStderr = (pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const match = stderr.match(pattern);
        if (match !== null) {
          finish();
          resolve(match);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          finish();
          reject(new Error(`the sidecar exited before printing ${String(pattern)}:\n${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no ${String(pattern)} on stderr within ${timeoutMs} ms:\n${stderr}`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  return {
    child,
    stderr: () => stderr,
    stdout: () => stdout,
    waitForStderr,
    exited,
    listenUrl: async (index = 0) => {
      const pattern = /listening on (http:\/\/\S+)/g;
      await waitForStderr(new RegExp(`(?:listening on http://\\S+[\\s\\S]*){${index + 1}}`));
      return [...stderr.matchAll(pattern)][index]![1]!;
    },
  };
}

/** Kills every sidecar child still running (SIGKILL) and waits for them to exit. */
export async function killSidecars(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** A fresh OTLP test receiver (and temporary directory) per test, from {@link useReceiver}. */
export interface ReceiverTestbed {
  /** The current test's receiver. */
  readonly receiver: OtlpReceiver;
  /** The current test's temporary directory (only with the `directory` option). */
  readonly directory: string;
}

/**
 * Registers the hooks every sidecar test file needs: a fresh receiver (and, with `directory`, a
 * temporary directory named with that prefix) before each test, and after it every sidecar child
 * killed, the receiver closed and the directory removed.
 */
export function useReceiver(options: { directory?: string } = {}): ReceiverTestbed {
  let receiver: OtlpReceiver | undefined;
  let directory: string | undefined;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
    if (options.directory !== undefined) {
      directory = mkdtempSync(join(tmpdir(), options.directory));
    }
  });
  afterEach(async () => {
    await killSidecars();
    await receiver?.close();
    receiver = undefined;
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
    directory = undefined;
  });
  return {
    get receiver(): OtlpReceiver {
      if (receiver === undefined) throw new Error('useReceiver(): read the receiver inside a test');
      return receiver;
    },
    get directory(): string {
      if (directory === undefined) {
        throw new Error('useReceiver(): give the directory option and read it inside a test');
      }
      return directory;
    },
  };
}
