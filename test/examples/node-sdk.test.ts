import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/node-sdk.ts', () => {
  it('nests the request span, the execute_tool span with its stream, and the tool code span in one trace', async () => {
    const { stdout, stderr } = await runExample('node-sdk.ts');
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
