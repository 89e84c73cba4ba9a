import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/stack/stack.js';

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

/** `npm run stack -- …args` as npm runs it (tsx), with pipes. */
function runStack(args: string[] = [], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/stack/run.ts', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const closed = once(child, 'close').then(([code]) => code as number | null);
  return { child, stdout: () => stdout, stderr: () => stderr, closed };
}

function prometheusFolders(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith('tooltrace-stack-prometheus-'));
}

async function answers(url: string, init?: RequestInit): Promise<number | 'refused'> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 'refused';
  }
}

describe('npm run stack', () => {
  it('prints the four addresses and "stack ready" first, serves them, and stops cleanly on SIGTERM', async () => {
    const before = prometheusFolders();
    const stack = runStack();
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (stack.stdout().includes('stack ready\n')) resolve();
      };
      stack.child.stdout.on('data', check);
      void stack.closed.then(() => reject(new Error(`exited early:\n${stack.stderr()}`)));
    });
    const lines = stack.stdout().split('\n');
    expect(lines.slice(0, 5).map((line) => line.replace(/\d+$/, 'PORT'))).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT',
      'OTLP_GRPC_ENDPOINT=http://127.0.0.1:PORT',
      'JAEGER_URL=http://127.0.0.1:PORT',
      'PROMETHEUS_URL=http://127.0.0.1:PORT',
      'stack ready',
    ]);
    const value = (name: string): string =>
      lines.find((line) => line.startsWith(`${name}=`))!.slice(name.length + 1);
    const otlp = value('OTEL_EXPORTER_OTLP_ENDPOINT');
    const jaeger = value('JAEGER_URL');
    const prometheus = value('PROMETHEUS_URL');
    const traces = `${otlp}/v1/traces`;
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
    expect(await answers(traces, post)).toBe(200);
    expect(await answers(`${jaeger}/api/services`)).toBe(200);
    expect(await answers(`${prometheus}/-/ready`)).toBe(200);
    expect(prometheusFolders().length).toBe(before.length + 1);

    stack.child.kill('SIGTERM');
    expect(await stack.closed).toBe(0);
    expect(await answers(traces, post)).toBe('refused');
    expect(await answers(`${jaeger}/api/services`)).toBe('refused');
    expect(await answers(`${prometheus}/-/ready`)).toBe('refused');
    expect(prometheusFolders()).toEqual(before);
  });

  it('says on one line that a port it was given is in use, and exits 1 without starting anything', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const stack = runStack(['--jaeger-port', String(port)]);
      expect(await stack.closed).toBe(1);
      expect(stack.stdout()).toBe('');
      expect(stack.stderr()).toBe(`stack: port ${port} on 127.0.0.1 (jaeger) is already in use\n`);
    } finally {
      server.close();
    }
  });

  it('says on one line that Go is missing, and exits 1', async () => {
    const stack = runStack([], {
      ...process.env,
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    });
    expect(await stack.closed).toBe(1);
    expect(stack.stdout()).toBe('');
    expect(stack.stderr().trim().split('\n')).toEqual([
      expect.stringMatching(/^stack: Go is not installed \(no 'go' on PATH\)/),
    ]);
  });
});
