import { describe, expect, it } from 'vitest';
import { RetryBackoff } from '../../src/wire/index.js';

describe('RetryBackoff', () => {
  describe('failed()', () => {
    it('waits between half and all of a backoff that doubles up to its maximum', () => {
      const backoff = new RetryBackoff(100, 400);
      const waits = [0, 1, 2, 3].map(() => backoff.failed(undefined, 0));
      // Each wait starts from the later retry time, so a wait is never shorter than the last.
      expect(waits[0]).toBeGreaterThanOrEqual(50);
      expect(waits[0]).toBeLessThanOrEqual(100);
      expect(waits[3]).toBeGreaterThanOrEqual(200);
      expect(waits[3]).toBeLessThanOrEqual(400);
    });

    it('waits for a longer Retry-After, up to its bound, and not less than the backoff', () => {
      const bounded = new RetryBackoff(100, 1000, 5000);
      expect(bounded.failed(60_000, 0)).toBe(5000);
      const busy = new RetryBackoff(100, 1000);
      const wait = busy.failed(0, 0);
      expect(wait).toBeGreaterThanOrEqual(50);
    });
  });

  describe('waitMs()', () => {
    it('says how long is left, and nothing once a success reset it', () => {
      const backoff = new RetryBackoff(1000, 1000, 2000);
      backoff.failed(2000, 10);
      expect(backoff.waitMs(1010)).toBe(1000);
      expect(backoff.waitMs(5000)).toBe(0);
      backoff.failed(2000, 10);
      backoff.succeeded();
      expect(backoff.waitMs(10)).toBe(0);
    });
  });
});
