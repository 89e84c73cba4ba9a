import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/node-sdk.ts', () => {
  it('nests the request span, the execute_tool span with its stream, and the tool code span in one trace', async () => {
    const env = { ...process.env };
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'examples/node-sdk.ts'],
      { cwd: root, env, timeout: 30_000 },
    );
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'POST /chat answered: 2 documents',
      'POST',
      '  POST',
      '    execute_tool search_docs  [tool.stream.progress, tool.stream.partial, tool.stream.progress]',
      '      rank results',
      'one trace',
    ]);
  });
});
