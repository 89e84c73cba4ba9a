import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Vitest's global setup: builds `dist` once before any test file runs, as `npm run build` does,
 * so the tests that spawn the CLI (the bundled `dist/cli.js`) or import the package by name run
 * the built JavaScript with plain `node`. The compile is incremental (tsconfig.build.json keeps
 * its state inside `dist`, so deleting `dist` rebuilds it whole); the bundles take about a second
 * and the sidecar's declaration roll-up a few more.
 */
export default function buildDist(): void {
  // `npm test` (scripts/test.ts) built it just before.
  if (process.env.TOOLTRACE_DIST_BUILT === '1') return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/bundle.ts'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
