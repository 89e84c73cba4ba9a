import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/ai-sdk.ts', () => {
  it("runs and prints the tool's output unchanged, its partials, and its own span under it", async () => {
    const { stdout, stderr } = await runExample('ai-sdk.ts');
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'text: Sun, then rain, then sun in Paris.',
      'tool output: {"city":"Paris","status":"ready","forecast":["sun","rain","sun"]}',
      'execute_tool forecast: call call_1, 2 partials',
      '  GET /forecast: child of the tool span: true',
    ]);
  });
});
