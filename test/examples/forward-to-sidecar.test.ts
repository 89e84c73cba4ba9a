import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/forward-to-sidecar.ts', () => {
  it('runs, forwards the events and prints the span the sidecar exported', async () => {
    const { stdout, stderr } = await runExample('forward-to-sidecar.ts');
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
