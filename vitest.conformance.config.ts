import { defineConfig } from 'vitest/config';

/**
 * `npm run test:conformance`: the official MCP conformance suite (`@modelcontextprotocol/
 * conformance`, Node 22 and later) against `serveMcpTools` and `mcpTools`, run by
 * `scripts/conformance.sh` under Node 24 with the suite installed in a cache folder. Kept out of
 * `npm test`, which runs on Node 20.
 */
export default defineConfig({
  test: {
    include: ['test-conformance/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 30_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
