import { posix } from 'node:path';
import { isDockerignored, parseDockerignore } from './dockerignore.js';
import { execForm, type Dockerfile, type DockerStage } from './dockerfile.js';
import { listRepoFiles, readRepoJson, readRepoText, repoFileExists } from './repo-files.js';
import { isYamlMap, stringAt } from './yaml-shape.js';

/** The files a stage holds after its instructions, as far as this repository put them there. */
export interface StageFiles {
  /** WORKDIR in force at the end of the stage. */
  workdir: string;
  /** Absolute paths inside the image, of files copied from the context or built. */
  files: Set<string>;
  /** Context paths a COPY named that are missing or left out by .dockerignore. */
  missingSources: string[];
}

/** Reads the `.dockerignore` patterns (none when the file is absent). */
export function dockerignorePatterns(): string[] {
  return repoFileExists('.dockerignore') ? parseDockerignore(readRepoText('.dockerignore')) : [];
}

/**
 * Follows the Dockerfile through WORKDIR, COPY (from the build context, minus .dockerignore, or
 * from an earlier stage) and `npm run build` (the TypeScript compile that tsconfig.build.json
 * describes), so tests can ask whether a path really exists in the image. Base-image files and
 * what `npm ci` installs are not tracked.
 */
export function followStages(dockerfile: Dockerfile): Map<string, StageFiles> {
  const ignore = dockerignorePatterns();
  const stages = new Map<string, StageFiles>();
  for (const [index, stage] of dockerfile.stages.entries()) {
    stages.set(stage.name ?? String(index), followStage(stage, stages, ignore));
  }
  return stages;
}

/**
 * Where tsconfig.build.json compiles a source file: `src/cli.ts` → `dist/cli.js`, or
 * `undefined` when the file is outside rootDir or not compiled.
 */
export function compiledPath(sourcePath: string): string | undefined {
  const options = buildCompilerOptions();
  const relative = posix.relative(options.rootDir, sourcePath);
  if (relative.startsWith('..') || !/\.(ts|mts|tsx)$/.test(relative) || /\.d\.ts$/.test(relative)) {
    return undefined;
  }
  return posix.join(options.outDir, relative.replace(/\.ts$/, '.js').replace(/\.mts$/, '.mjs'));
}

/** rootDir and outDir of tsconfig.build.json, relative to the repository root. */
export function buildCompilerOptions(): { rootDir: string; outDir: string; extends: string[] } {
  const chain: string[] = [];
  let rootDir: string | undefined;
  let outDir: string | undefined;
  for (let file: string | undefined = 'tsconfig.build.json'; file !== undefined;) {
    chain.push(file);
    const config = readRepoJson(file);
    if (!isYamlMap(config)) throw new Error(`${file} is not an object`);
    const options = isYamlMap(config.compilerOptions) ? config.compilerOptions : {};
    const base = posix.dirname(file);
    if (rootDir === undefined && options.rootDir !== undefined) {
      rootDir = posix.join(base, stringAt(options.rootDir, `${file}: rootDir`));
    }
    if (outDir === undefined && options.outDir !== undefined) {
      outDir = posix.join(base, stringAt(options.outDir, `${file}: outDir`));
    }
    file =
      config.extends === undefined
        ? undefined
        : posix.join(base, stringAt(config.extends, `${file}: extends`));
  }
  if (rootDir === undefined || outDir === undefined) {
    throw new Error('tsconfig.build.json (with what it extends) sets no rootDir or outDir');
  }
  return { rootDir, outDir, extends: chain.slice(1) };
}

function followStage(
  stage: DockerStage,
  earlier: ReadonlyMap<string, StageFiles>,
  ignore: readonly string[],
): StageFiles {
  let workdir = '/';
  const files = new Set<string>();
  const missingSources: string[] = [];
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = posix.resolve(workdir, instruction.args);
    if (instruction.keyword === 'COPY') {
      const words = execForm(instruction.args) ?? instruction.args.split(/\s+/);
      const flags = words.filter((word) => word.startsWith('--'));
      const paths = words.filter((word) => !word.startsWith('--'));
      const destinationText = paths.pop()!;
      const destination = posix.resolve(workdir, destinationText);
      const intoDirectory = destinationText.endsWith('/') || paths.length > 1;
      const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
      for (const source of paths) {
        const copied =
          from === undefined
            ? contextFiles(source, ignore, missingSources)
            : stageFiles(earlier.get(from), source);
        for (const { path, relativeToSource } of copied) {
          const target =
            relativeToSource === ''
              ? intoDirectory
                ? posix.join(destination, posix.basename(path))
                : destination
              : posix.join(destination, relativeToSource);
          files.add(target);
        }
      }
    }
    if (instruction.keyword === 'RUN' && /\bnpm run build\b/.test(instruction.args)) {
      compile(workdir, files);
    }
  }
  return { workdir, files, missingSources };
}

function contextFiles(
  source: string,
  ignore: readonly string[],
  missing: string[],
): { path: string; relativeToSource: string }[] {
  const normalized = posix.normalize(source).replace(/\/$/, '');
  const listed = listRepoFiles(normalized).filter((path) => !isDockerignored(path, ignore));
  if (listed.length === 0) missing.push(source);
  return listed.map((path) => ({
    path,
    relativeToSource: path === normalized ? '' : posix.relative(normalized, path),
  }));
}

function stageFiles(
  stage: StageFiles | undefined,
  source: string,
): { path: string; relativeToSource: string }[] {
  if (stage === undefined) return [];
  const root = posix.resolve(stage.workdir, source);
  return [...stage.files]
    .filter((path) => path === root || path.startsWith(`${root}/`))
    .map((path) => ({ path, relativeToSource: path === root ? '' : posix.relative(root, path) }));
}

/** `npm run build` is `tsc -p tsconfig.build.json`: every source under rootDir gains its output. */
function compile(workdir: string, files: Set<string>): void {
  const options = buildCompilerOptions();
  const inStage = (path: string): string => posix.join(workdir, path);
  const configs = ['tsconfig.build.json', ...options.extends];
  if (!configs.every((config) => files.has(inStage(config)))) return;
  for (const file of [...files]) {
    if (!file.startsWith(`${workdir}/`)) continue;
    const output = compiledPath(posix.relative(workdir, file));
    if (output !== undefined) files.add(inStage(output));
  }
}
