import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/build-dist.ts'],
    // A guard against hangs, not a speed check: a type-check or a spawned example can take a
    // minute on a shared 2-core machine under load, and failing then says nothing about the code.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most of the suite's time is spent waiting on child processes and sockets, not computing:
    // Vitest's default (one worker per core but one) would run it file after file on 2 cores.
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
