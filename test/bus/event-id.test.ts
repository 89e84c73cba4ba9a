import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { isEventId, newEventId } from '../../src/index.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function heapUsed(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

describe('newEventId()', () => {
  it('makes distinct ids of 32 lowercase hex characters', () => {
    const ids = Array.from({ length: 2_000 }, () => newEventId());
    expect(ids.every((id) => isEventId(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps nothing alive but the id: an id held for long costs bytes, not its batch of random text', () => {
    // One id kept out of every 256 made, as a tracer remembers one id per call while the
    // call's stream events take the others; ids drawn from one shared hex string kept the
    // whole 8 KB string alive for each kept id.
    const kept: string[] = [];
    const before = heapUsed();
    for (let index = 0; index < 500 * 256; index += 1) {
      const id = newEventId();
      if (index % 256 === 0) kept.push(id);
    }
    const perId = (heapUsed() - before) / kept.length;
    expect(kept).toHaveLength(500);
    expect(perId).toBeLessThan(400);
  });
});
