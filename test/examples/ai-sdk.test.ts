import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/ai-sdk.ts', () => {
  it("runs and prints the tool's output unchanged, its partials, and its own span under it", async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'examples/ai-sdk.ts'],
      { cwd: root, timeout: 20_000 },
    );
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'text: Sun, then rain, then sun in Paris.',
      'tool output: {"city":"Paris","status":"ready","forecast":["sun","rain","sun"]}',
      'execute_tool forecast: call call_1, 2 partials',
      '  GET /forecast: child of the tool span: true',
    ]);
  });
});
