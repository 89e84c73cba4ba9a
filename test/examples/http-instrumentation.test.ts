import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/http-instrumentation.ts', () => {
  it("puts the HTTP client span of the tool's request under its execute_tool span, in one trace", async () => {
    const env = { ...process.env };
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'examples/http-instrumentation.ts'],
      { cwd: root, env, timeout: 30_000 },
    );
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'tool result: 14 bytes',
      'execute_tool fetch_page  parent: (root)',
      'GET  parent: execute_tool fetch_page',
      'GET  parent: GET',
      'one trace',
    ]);
  });
});
