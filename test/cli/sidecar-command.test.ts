import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';

/** Runs the CLI in-process and collects what it writes. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await runCli(argv, { stdout, stderr });
  return { code, stdout: out, stderr: err };
}

describe('tooltrace sidecar (command)', () => {
  it('prints its usage with --help and exits 0', async () => {
    const result = await cli(['sidecar', '--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: tooltrace sidecar/);
    expect(result.stdout).toMatch(/--max-body-bytes/);
    expect(result.stdout).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('exits 2 naming what is missing when no source is given', async () => {
    const result = await cli(['sidecar']);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /at least one source: --stdin, --file PATH or --listen HOST:PORT/,
    );
  });

  it('exits 2 for a checkpoint without exactly one file', async () => {
    const result = await cli(['sidecar', '--stdin', '--checkpoint', 'cp.json']);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--checkpoint needs exactly one --file/);
  });

  it('exits 2 for --checkpoint-reset without --checkpoint, and for too short timeouts', async () => {
    const reset = await cli(['sidecar', '--stdin', '--checkpoint-reset']);
    expect(reset.code).toBe(2);
    expect(reset.stderr).toMatch(/--checkpoint-reset needs --checkpoint/);
    const hurried = await cli(['sidecar', '--listen', '127.0.0.1:0', '--body-timeout', '5ms']);
    expect(hurried.code).toBe(2);
    expect(hurried.stderr).toMatch(/--body-timeout must be from 100ms to 2147483647ms .*, got 5ms/);
  });

  it('exits 2 for an empty --token rather than listening without one', async () => {
    const result = await cli(['sidecar', '--listen', '127.0.0.1:0', '--token', '']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--token needs a secret, got an empty one/);
  });

  it('exits 2 for durations longer than a timer can wait (they would fire after 1 ms)', async () => {
    for (const [flag, value, ms] of [
      ['--shutdown-timeout', '36000m', 2_160_000_000],
      ['--status-interval', '600h', 2_160_000_000],
      ['--idle-timeout', '0', 0],
    ] as const) {
      const result = await cli(['sidecar', '--stdin', flag, value]);
      expect(result.code, flag).toBe(2);
      expect(result.stderr).toContain(`${flag} must be from `);
      expect(result.stderr).toContain(`got ${ms}ms`);
    }
  });

  it('exits 2 naming the line of a token file without a name, and keeps its secret out', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tooltrace-token-file-'));
    try {
      const tokenFile = join(directory, 'tokens');
      writeFileSync(tokenFile, 'alice=secret-a\nhunter2\n');
      const result = await cli(['sidecar', '--listen', '127.0.0.1:0', '--token-file', tokenFile]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--token-file ${tokenFile} line 2: expected NAME=SECRET`);
      expect(result.stderr).not.toContain('hunter2');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('exits 2 for a listen address it cannot parse or bind', async () => {
    expect((await cli(['sidecar', '--listen', 'nowhere'])).stderr).toMatch(/is not HOST:PORT/);
    const taken = await cli(['sidecar', '--listen', '192.0.2.1:0', '--token', 't']);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/cannot listen/);
  });
});
