import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/http-instrumentation.ts', () => {
  it("puts the HTTP client span of the tool's request under its execute_tool span, in one trace", async () => {
    const { stdout, stderr } = await runExample('http-instrumentation.ts');
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
