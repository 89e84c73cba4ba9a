import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in test-stack). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A free TCP port on 127.0.0.1 (closed again, so a child can bind it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `probe` every `intervalMs` until it returns something other than `undefined`, and
 * resolves with it; rejects naming `what` (and the last error the probe threw) after
 * `timeoutMs`. Every wait in these tests goes through here, so none can hang.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `${what}: not within ${timeoutMs} ms${last === undefined ? '' : ` (last error: ${String(last)})`}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** A child process whose output is kept (bounded) and who is killed when the tests end. */
export class Child {
  readonly name: string;
  readonly process: ChildProcess;
  /** Resolves with the exit code (`null` when a signal ended it) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #output = '';

  constructor(name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv) {
    this.name = name;
    this.process = spawn(command, args, {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer): void => {
      this.#output += chunk.toString('utf8');
      // The last 256 KB are enough to tell what happened; a chatty child cannot grow this.
      if (this.#output.length > 512 * 1024) this.#output = this.#output.slice(-256 * 1024);
    };
    this.process.stdout!.on('data', keep);
    this.process.stderr!.on('data', keep);
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => resolve({ code, signal }));
    });
    // A child that cannot be spawned reports through 'error', and exits with nothing else.
    this.process.once('error', (error) => {
      this.#output += `\nspawn failed: ${String(error)}`;
    });
    LIVE.add(this);
    void this.exited.then(() => LIVE.delete(this));
  }

  /** Everything it wrote on stdout and stderr so far (the last 256 KB or more). */
  get output(): string {
    return this.#output;
  }

  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /**
   * Sends `signal`, and SIGKILL after `graceMs` if it has not exited; resolves once it has.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.process.kill(signal);
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

const LIVE = new Set<Child>();

/** Kills (SIGKILL) every child still running: for `afterAll`, after the orderly stops. */
export async function killAll(): Promise<void> {
  await Promise.all([...LIVE].map((child) => child.stop('SIGKILL', 0)));
}
