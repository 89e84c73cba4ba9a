import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/mcp.ts', () => {
  it('runs and prints the served call under the client call, in one trace, with both streams', async () => {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'examples/mcp.ts'], {
      cwd: root,
      timeout: 20_000,
    });
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'result: {"content":[{"type":"text","text":"{\\"folder\\":\\"src\\",\\"files\\":40}"}],"structuredContent":{"folder":"src","files":40}}',
      'execute_tool count_files (client): 6 progress, 0 partials, mcp.method.name=tools/call',
      '  execute_tool count_files (server): 4 progress, 2 partials, mcp.method.name=tools/call',
      'one trace: true',
    ]);
  });
});
