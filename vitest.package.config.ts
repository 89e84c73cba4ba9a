import { defineConfig } from 'vitest/config';

/**
 * `npm run test:package`: the packed package installed into scratch projects from the npm
 * registry (test-package/). Kept out of `npm test`: it needs the registry and takes a minute or two.
 */
export default defineConfig({
  test: {
    include: ['test-package/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // One file; its installs run side by side in its own beforeAll.
    fileParallelism: false,
  },
});
