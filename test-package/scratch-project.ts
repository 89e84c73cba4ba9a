import { execFile, execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';

const run = promisify(execFile);

/** The repository (the package under test). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The README and every page of docs/, whose code blocks users copy. */
function documentationPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(ROOT, 'docs', name));
  return [join(ROOT, 'README.md'), ...docs];
}

/**
 * The ```ts or ```js block of README.md or docs/*.md that contains `marker`, as JavaScript a
 * user's project runs.
 */
export function readmeBlockAsJavaScript(marker: string): string {
  const block = documentationPages()
    .flatMap((page) =>
      readFileSync(page, 'utf8')
        .split(/```(?:ts|js)\n/)
        .slice(1),
    )
    .map((text) => text.slice(0, text.indexOf('\n```')))
    .find((code) => code.includes(marker));
  if (block === undefined) throw new Error(`no ts or js block of README.md or docs/ has ${marker}`);
  return ts.transpileModule(block, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

/** One installed package: its name, version and folder. */
export interface InstalledPackage {
  name: string;
  version: string;
  path: string;
}

/**
 * Packs the built package as `npm publish` would (`npm run build` has run: `npm run
 * test:package` does it first) into a fresh folder; returns the tarball's path.
 */
export function packTarball(): string {
  const destination = join(tmpdir(), `tooltrace-pack-${process.pid}`);
  mkdirSync(destination, { recursive: true });
  const output = execFileSync(
    'npm',
    ['pack', '--ignore-scripts', '--silent', '--pack-destination', destination],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return join(destination, output.trim().split('\n').at(-1)!);
}

/** The path of a Node binary of `major`, fetched from the registry and cached (see the script). */
export function nodeBinary(major: number): string {
  return execFileSync('bash', [join(ROOT, 'scripts/node-binary.sh'), String(major)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** The file in a scratch project that holds what `npm install` wrote on stderr. */
export const INSTALL_LOG = 'npm-install.log';

/** A scratch ES module project in a temporary folder with `packages` installed as a user would. */
export async function scratchProject(
  name: string,
  packages: string[],
  npmFlags: string[] = [],
): Promise<string> {
  const folder = join(tmpdir(), `tooltrace-package-${process.pid}`, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'package.json'),
    `${JSON.stringify({ name: `scratch-${name}`, private: true, type: 'module' }, null, 2)}\n`,
  );
  const { stderr } = await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', ...npmFlags, ...packages],
    {
      cwd: folder,
      timeout: 300_000,
    },
  );
  // What npm said while installing (its warnings), for the tests to read.
  writeFileSync(join(folder, INSTALL_LOG), stderr);
  return folder;
}

/** Every package under `folder/node_modules`, nested ones included. */
export function installedPackages(folder: string): InstalledPackage[] {
  const found: InstalledPackage[] = [];
  const visit = (modules: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(modules);
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.startsWith('.')) continue;
      const folders = entry.startsWith('@')
        ? readdirSync(join(modules, entry)).map((inner) => join(modules, entry, inner))
        : [join(modules, entry)];
      for (const path of folders) {
        try {
          const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as {
            name: string;
            version: string;
          };
          found.push({ name: manifest.name, version: manifest.version, path });
        } catch {
          continue;
        }
        visit(join(path, 'node_modules'));
      }
    }
  };
  visit(join(folder, 'node_modules'));
  return found;
}

/** Bytes the files under `folder` take on disk (allocated blocks, as `du` counts). */
export function diskBytes(folder: string): number {
  const stat = lstatSync(folder);
  if (!stat.isDirectory()) return stat.blocks * 512;
  let total = stat.blocks * 512;
  for (const entry of readdirSync(folder)) total += diskBytes(join(folder, entry));
  return total;
}

/** The names installed in more than one version, with their versions. */
export function duplicated(packages: InstalledPackage[]): Record<string, string[]> {
  const versions = new Map<string, Set<string>>();
  for (const { name, version } of packages) {
    versions.set(name, (versions.get(name) ?? new Set()).add(version));
  }
  return Object.fromEntries(
    [...versions].filter(([, set]) => set.size > 1).map(([name, set]) => [name, [...set].sort()]),
  );
}

/** Runs `script` with the Node binary `node` in `folder` (its PATH starts with that Node). */
export async function runWith(
  node: string,
  folder: string,
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<{ stdout: string; stderr: string; code: number }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of Object.keys(environment)) {
    if (name.startsWith('OTEL_') && !(name in env)) delete environment[name];
  }
  environment.PATH = `${dirname(node)}:${process.env.PATH ?? ''}`;
  return new Promise((resolve) => {
    const child = execFile(
      args[0] === 'node' ? node : args[0]!,
      args.slice(1),
      { cwd: folder, env: environment, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ stdout, stderr, code });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}
