/**
 * Bundles the `tooltrace` command into `dist/cli.js` (run by `npm run build` after `tsc`, which
 * leaves the rest of `dist` — the library entry points — as one module per source file).
 *
 * Why: Node.js loads every ES module and every CommonJS file of a dependency on its own, and the
 * command reaches about 125 of ours and several hundred of the OpenTelemetry SDK's. Resolving,
 * reading and compiling them took `tooltrace sidecar` 0.18 s to start against 0.11 s for a bare
 * script that loads the SDK (`bench/startup.bench.ts`); bundled, it starts in about the same time
 * as that script. Each subcommand stays in its own chunk under `dist/cli-chunks/`, loaded when
 * the subcommand runs (`run-cli.ts` imports them dynamically), so `tooltrace view` does not load
 * the exporter and `tooltrace sidecar` does not load the demo.
 *
 * The bundle includes the dependencies' code (the command is a program, not a library: nothing
 * else shares its copy of `@opentelemetry/api`). `src/version.ts` reads `../package.json` beside
 * itself at run time; in the bundle the version is written in at build time instead, since the
 * chunks live one folder further down.
 */
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string };

/** Replaces `src/version.ts` with its value, read from package.json now. */
const versionAtBuildTime: Plugin = {
  name: 'version-at-build-time',
  setup(context) {
    context.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, () => ({
      contents: `export const VERSION = ${JSON.stringify(version)};`,
      loader: 'js',
    }));
  },
};

rmSync(`${root}dist/cli-chunks`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'src/cli.ts' },
  outdir: 'dist',
  chunkNames: 'cli-chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  // The OpenTelemetry packages' ES module builds: no CommonJS interop getters on every read of
  // an imported binding (0.5-0.9% of the sidecar's time), and a third smaller.
  mainFields: ['module', 'main'],
  target: 'node20',
  // CommonJS dependencies call require() for Node's own modules; ES modules have no require.
  banner: {
    js: "import { createRequire as createRequireForBundle } from 'node:module';\nconst require = createRequireForBundle(import.meta.url);",
  },
  plugins: [versionAtBuildTime],
  logLevel: 'warning',
});
