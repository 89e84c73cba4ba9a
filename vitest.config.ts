import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/build-dist.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most of the suite's time is spent waiting on child processes and sockets, not computing:
    // Vitest's default (one worker per core but one) would run it file after file on 2 cores.
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
