import { describe, expect, it } from 'vitest';
import { UnknownToolError } from '../../src/errors/index.js';

describe('UnknownToolError', () => {
  it('lists the first 20 known tools in its message and counts the rest, whatever the bus answers', () => {
    const known = Array.from({ length: 5_000 }, (_, index) => `tool_${index}_${'x'.repeat(100)}`);
    const error = new UnknownToolError('y'.repeat(10_000), known);

    expect(error.message.length).toBeLessThan(2_000);
    expect(error.message).toContain('and 4980 more');
    expect(error.message).toContain(`"${'y'.repeat(64)}…"`);
    expect(error.knownTools).toHaveLength(5_000);
  });

  it('names every tool when there are few', () => {
    expect(new UnknownToolError('serach', ['read_file', 'search']).message).toBe(
      'no tool named "serach" is answered on this bus; the tools are: read_file, search',
    );
  });
});
