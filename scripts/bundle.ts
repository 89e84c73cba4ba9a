/**
 * The second half of `npm run build` (after `tsc`, which leaves one module per source file in
 * `dist`): bundles what needs third-party code, so the published package has no runtime
 * dependencies. `npm install tooltrace @opentelemetry/api` installs those two packages and
 * nothing else; the OpenTelemetry SDK, the OTLP exporters, gRPC and the terminal helpers the
 * command uses travel inside the bundles.
 *
 * - `dist/cli.js`: the `tooltrace` command. Each subcommand stays in its own chunk (loaded when
 *   it runs: `run-cli.ts` imports them dynamically), so `tooltrace view` does not load the
 *   exporter. Bundled because Node.js loads every module on its own: resolving and compiling
 *   about 125 of ours and several hundred of the SDK's took `tooltrace sidecar` 0.18 s to start
 *   against 0.11 s for a bare script that loads the SDK (`bench/startup.bench.ts`).
 * - `dist/sidecar/bundle.js`: the `tooltrace/sidecar` entry (`runSidecar`), sharing its chunks
 *   with the command; its declarations are rolled into one `bundle.d.ts` (below) that names no
 *   SDK type. (Beside `tsc`'s `index.js`, never over it: the incremental compile would not write
 *   `index.d.ts` again, and the roll-up would read its own output.)
 * - `dist/vendor/grpc.js`: the part of `@grpc/grpc-js` that `tooltrace/testing`'s gRPC receiver
 *   loads (the rest of `tooltrace/testing` is plain `tsc` output and needs nothing).
 *
 * `@opentelemetry/api` stays outside every bundle: it is the package's one peer dependency, so
 * the command, the sidecar and the application share one copy of it (its global context, tracer
 * and meter providers). Chunks live in `dist/chunks/`. The light entries (`tooltrace`,
 * `tooltrace/otel`, `tooltrace/forward`) are `tsc` output and import nothing but the API.
 *
 * `src/version.ts` reads `../package.json` beside itself at run time; in the bundles the version
 * is written in at build time instead, since the chunks live one folder further down.
 */
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
} from '@microsoft/api-extractor';
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

rmSync(`${root}dist/chunks`, { recursive: true, force: true });
rmSync(`${root}dist/cli-chunks`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: {
    cli: 'src/cli.ts',
    'sidecar/bundle': 'src/sidecar/index.ts',
    'vendor/grpc': 'src/vendor/grpc.ts',
  },
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  external: ['@opentelemetry/api'],
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

/**
 * Rolls the declarations of `tooltrace/sidecar` into one file holding its public names only:
 * the `tsc` declarations of its internals import SDK types, which an installed tooltrace does
 * not have (the SDK is inside the bundle), so a user's `tsc` without `skipLibCheck` would fail.
 */
function rollUpDeclarations(entry: string, output: string): void {
  const base = ExtractorConfig.loadFile(`${root}api-extractor.json`);
  const config = ExtractorConfig.prepare({
    configObject: {
      ...base,
      projectFolder: root,
      mainEntryPointFilePath: `${root}dist/${entry}.d.ts`,
      apiReport: { ...base.apiReport!, enabled: false },
      dtsRollup: { enabled: true, untrimmedFilePath: `${root}dist/${output}.d.ts` },
    },
    configObjectFullPath: `${root}api-extractor.json`,
    packageJsonFullPath: `${root}package.json`,
  });
  const result = Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message: ExtractorMessage) => {
      if (message.logLevel !== ExtractorLogLevel.Error) message.handled = true;
    },
  });
  if (!result.succeeded) throw new Error(`rolling up the declarations of dist/${entry} failed`);
}

rollUpDeclarations('sidecar/index', 'sidecar/bundle');
