import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/streaming-tool.ts', () => {
  it('runs, prints the stream in order and every event as a child of the tool.invoke', async () => {
    const { stdout, stderr } = await runExample('streaming-tool.ts');
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    expect(lines).toEqual([
      'progress #1 0% (child of tool.invoke)',
      'partial  #2 README.md: 63 lines (child of tool.invoke)',
      'progress #3 33% (child of tool.invoke)',
      'partial  #4 src/index.ts: 84 lines (child of tool.invoke)',
      'progress #5 67% (child of tool.invoke)',
      'partial  #6 package.json: 84 lines (child of tool.invoke)',
      'progress #7 100% (child of tool.invoke)',
      'result   {"files":3,"summary":["README.md: 63 lines","src/index.ts: 84 lines","package.json: 84 lines"]} (child of tool.invoke)',
      'done',
    ]);
  });
});
