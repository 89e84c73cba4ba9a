import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Vitest's global setup: builds `dist` once before any test file runs, so the tests that spawn
 * the CLI or import the package by name run the built JavaScript with plain `node`. The build is
 * incremental (tsconfig.build.json keeps its state inside `dist`, so deleting `dist` rebuilds it
 * whole): after `npm test`'s own build, or when nothing changed, it takes about a second.
 */
export default function buildDist(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
