import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/forward-to-sidecar.ts', () => {
  it('runs, forwards the events and prints the span the sidecar exported', async () => {
    const env = { ...process.env };
    for (const name of Object.keys(env)) {
      if (name.startsWith('OTEL_') || name.startsWith('TOOLTRACE_')) delete env[name];
    }
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'examples/forward-to-sidecar.ts'],
      { cwd: root, env, timeout: 20_000 },
    );
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^sidecar listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines[1]).toBe('tool result: {"indexed":4}');
    expect(lines[2]).toMatch(/^forwarded \d+ events$/);
    expect(lines.slice(3)).toEqual([
      'tooltrace-sidecar exported execute_tool index_files  OK  4 span events',
    ]);
  });
});
