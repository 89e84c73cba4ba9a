import { defineConfig } from 'vitest/config';

/**
 * `npm run test:stack`: tooltrace against the real backends — an OpenTelemetry Collector, Jaeger
 * v2 and Prometheus built from their Go sources (scripts/stack/build.sh, cached in
 * ~/.cache/tooltrace/stack) — asserting on what Jaeger's and Prometheus's HTTP APIs give back.
 * Needs Go 1.26 and the Go module proxy; kept out of `npm test`, which needs Node alone. The global
 * setup builds `dist` and the three programs once (minutes the first time, with progress on
 * stderr); each file starts the processes it needs on free 127.0.0.1 ports. Files run one after
 * another: each starts Go programs of its own, and two cores are shared.
 */
export default defineConfig({
  test: {
    include: ['test-stack/**/*.test.ts'],
    globalSetup: ['test/build-dist.ts', 'test-stack/build-stack.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
