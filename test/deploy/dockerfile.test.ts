import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDockerignored } from './dockerignore.js';
import {
  durationMilliseconds,
  execForm,
  instructionsOf,
  lastInstruction,
  parseDockerfile,
  parseHealthcheck,
  stageNamed,
} from './dockerfile.js';
import { parseEndpoint } from './endpoint.js';
import {
  buildCompilerOptions,
  compiledPath,
  dockerignorePatterns,
  followStages,
} from './image-files.js';
import { readRepoJson, readRepoText, repoFileExists } from './repo-files.js';
import { flagValues } from './service-listeners.js';
import { isYamlMap, mapAt, stringAt } from './yaml-shape.js';

const dockerfile = parseDockerfile(readRepoText('Dockerfile'));
const build = stageNamed(dockerfile, 'build');
const runtime = dockerfile.stages.at(-1)!;
const stageFiles = followStages(dockerfile);
const runtimeFiles = stageFiles.get(runtime.name!)!;
const packageJson = mapAt(readRepoJson('package.json'), 'package.json');

function exec(keyword: string): string[] {
  const instruction = lastInstruction(runtime, keyword);
  expect(instruction, `the runtime stage has ${keyword}`).toBeDefined();
  const list = execForm(instruction!.args);
  expect(list, `${keyword} is in exec form (signals reach the process)`).toBeDefined();
  return list!;
}

function binPath(): string {
  const bin = mapAt(packageJson.bin, 'package.json: bin');
  return posix.normalize(stringAt(bin.tooltrace, 'package.json: bin.tooltrace'));
}

const healthcheck = parseHealthcheck(lastInstruction(runtime, 'HEALTHCHECK')!.args);
const healthScript = healthcheck.command[2] ?? '';

/** Runs the image's health check script with Node, probing `url`; resolves its exit code. */
function runHealthcheck(url: string): Promise<number> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      healthcheck.command.slice(1),
      { env: { ...process.env, TOOLTRACE_HEALTHCHECK_URL: url }, timeout: 10_000 },
      (error) => resolve(error === null ? 0 : typeof error.code === 'number' ? error.code : -1),
    );
  });
}

/**
 * Whether `version` ([major, minor, patch]) satisfies an `engines.node` range made of `^X.Y.Z`
 * and `>=X.Y.Z` alternatives joined by `||` (the forms package.json uses).
 */
function satisfiesEngines(range: string, version: number[]): boolean {
  const compare = (a: number[], b: number[]): number =>
    a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
  return range.split('||').some((alternative) => {
    const match = /^\s*(\^|>=)(\d+)\.(\d+)\.(\d+)\s*$/.exec(alternative);
    if (match === null) throw new Error(`engines.node: cannot read ${alternative.trim()}`);
    const floor = match.slice(2).map(Number);
    if (compare(version, floor) < 0) return false;
    return match[1] === '>=' || version[0] === floor[0];
  });
}

describe('Dockerfile', () => {
  describe('base image', () => {
    it('uses one exact release of Node 24, an LTS line CI tests, for every stage', () => {
      const images = new Set(dockerfile.stages.map((stage) => stage.image));
      expect(images.size).toBe(1);
      const [image] = images;
      expect(image).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim$/);
    });

    it("satisfies package.json's engines.node", () => {
      const engines = mapAt(packageJson.engines, 'package.json: engines');
      const version = /^node:(\d+)\.(\d+)\.(\d+)/.exec(runtime.image)!.slice(1).map(Number);
      expect(satisfiesEngines(stringAt(engines.node, 'engines.node'), version)).toBe(true);
    });
  });

  describe('build stage', () => {
    it('installs every dependency from the lockfile before copying the sources', () => {
      const runs = instructionsOf(build, 'RUN');
      const install = runs.find((run) => /\bnpm ci\b/.test(run.args));
      expect(install?.args).not.toMatch(/--omit=dev/);
      // No dependency's install script is needed for the build.
      expect(install?.args).toMatch(/--ignore-scripts/);
      const copiesSources = instructionsOf(build, 'COPY').find((copy) => /\bsrc\b/.test(copy.args));
      expect(install!.line).toBeLessThan(copiesSources!.line);
    });

    it("runs package.json's build script, which compiles with tsconfig.build.json and bundles the command", () => {
      expect(instructionsOf(build, 'RUN').some((run) => /\bnpm run build\b/.test(run.args))).toBe(
        true,
      );
      const scripts = mapAt(packageJson.scripts, 'package.json: scripts');
      expect(scripts.build).toBe('tsc -p tsconfig.build.json && tsx scripts/bundle.ts');
    });

    it('packs the built package as npm publishes it, without running the build again', () => {
      const pack = instructionsOf(build, 'RUN').find((run) => /\bnpm pack\b/.test(run.args));
      expect(pack?.args).toMatch(/--ignore-scripts/);
      expect(pack?.args).toMatch(/--pack-destination \/tmp\/package\b/);
    });

    it('copies every file the build reads and nothing .dockerignore leaves out', () => {
      expect(stageFiles.get('build')!.missingSources).toEqual([]);
      const files = stageFiles.get('build')!.files;
      const workdir = stageFiles.get('build')!.workdir;
      for (const file of [
        'package.json',
        'package-lock.json',
        'tsconfig.build.json',
        'api-extractor.json',
        'scripts/bundle.ts',
        'README.md',
        'LICENSE',
      ]) {
        expect(files.has(posix.join(workdir, file)), file).toBe(true);
      }
      for (const file of buildCompilerOptions().extends) {
        expect(files.has(posix.join(workdir, file)), `${file} (extended)`).toBe(true);
      }
    });

    it('compiles src/cli.ts to the path package.json names as the tooltrace bin', () => {
      expect(repoFileExists('src/cli.ts')).toBe(true);
      expect(compiledPath('src/cli.ts')).toBe(binPath());
      const workdir = stageFiles.get('build')!.workdir;
      expect(stageFiles.get('build')!.files.has(posix.join(workdir, binPath()))).toBe(true);
    });
  });

  describe('runtime stage', () => {
    it('installs the packed tarball globally, as a user installs it, without lifecycle scripts', () => {
      const copies = instructionsOf(runtime, 'COPY');
      expect(copies.map((copy) => copy.args)).toEqual(['--from=build /tmp/package /tmp/package']);
      const install = instructionsOf(runtime, 'RUN').find((run) =>
        /\bnpm install\b/.test(run.args),
      );
      expect(install?.args).toMatch(/--global/);
      expect(install?.args).toMatch(/--ignore-scripts/);
      expect(install?.args).toMatch(/\/tmp\/package\/tooltrace-\*\.tgz/);
    });

    it('holds no TypeScript sources and no copy of the build tree', () => {
      expect(runtimeFiles.missingSources).toEqual([]);
      expect(
        [...runtimeFiles.files].filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
      ).toEqual([]);
      expect(instructionsOf(runtime, 'RUN').some((run) => /\bnpm ci\b/.test(run.args))).toBe(false);
    });

    it('runs as the unprivileged node user', () => {
      const user = lastInstruction(runtime, 'USER')?.args;
      expect(user).toBe('node');
    });

    it('has ENTRYPOINT tooltrace, the bin the global install links onto PATH', () => {
      const [command, ...rest] = exec('ENTRYPOINT');
      expect(command).toBe('tooltrace');
      expect(rest).toEqual([]);
      expect(Object.keys(mapAt(packageJson.bin, 'package.json: bin'))).toEqual([command]);
      expect(repoFileExists('src/cli.ts')).toBe(true);
      expect(compiledPath('src/cli.ts')).toBe(binPath());
      // Executed through the link, the compiled file must say which interpreter runs it.
      expect(readRepoText('src/cli.ts').split('\n', 1)[0]).toBe('#!/usr/bin/env node');
    });

    it('starts the sidecar by default, listening on every interface of the port it exposes', () => {
      const command = exec('CMD');
      expect(command[0]).toBe('sidecar');
      const [listen] = flagValues(command, '--listen');
      const endpoint = parseEndpoint(listen ?? '', 'CMD --listen');
      expect(endpoint.host).toBe('0.0.0.0');
      const exposed = instructionsOf(runtime, 'EXPOSE').flatMap((expose) =>
        expose.args.split(/\s+/),
      );
      expect(exposed).toEqual([String(endpoint.port)]);
    });
  });

  describe('HEALTHCHECK', () => {
    it('runs Node, which the image has (slim images have no curl or wget)', () => {
      expect(healthcheck.command.slice(0, 2)).toEqual(['node', '-e']);
      expect(healthcheck.command).toHaveLength(3);
    });

    it("asks /healthz on the default CMD's listen port", () => {
      const [listen] = flagValues(exec('CMD'), '--listen');
      const port = parseEndpoint(listen!, 'CMD --listen').port;
      expect(healthScript).toContain(`'http://127.0.0.1:${port}/healthz'`);
    });

    it('gives up before Docker stops waiting for it', () => {
      const timeout = /AbortSignal\.timeout\((\d+)\)/.exec(healthScript);
      expect(timeout, 'the probe has its own timeout').not.toBeNull();
      expect(Number(timeout![1])).toBeLessThan(durationMilliseconds(healthcheck.options.timeout!));
    });

    describe('probing a real server', () => {
      let server: Server;
      let base: string;

      beforeAll(async () => {
        server = createServer((request, response) => {
          if (request.url === '/healthz') response.writeHead(200).end('ok');
          else if (request.url === '/hang') return;
          else response.writeHead(503).end('not ready');
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      });

      afterAll(async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      });

      it('exits 0 when /healthz answers 200', async () => {
        expect(await runHealthcheck(`${base}/healthz`)).toBe(0);
      });

      it('exits 1 when the sidecar answers an error status', async () => {
        expect(await runHealthcheck(`${base}/unhealthy`)).toBe(1);
      });

      it('exits 1 when nothing listens', async () => {
        const closed = createServer();
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
        const port = (closed.address() as AddressInfo).port;
        await new Promise((resolve) => closed.close(resolve));
        expect(await runHealthcheck(`http://127.0.0.1:${port}/healthz`)).toBe(1);
      });

      it('exits 1 when the sidecar does not answer', async () => {
        expect(await runHealthcheck(`${base}/hang`)).toBe(1);
      });
    });
  });

  describe('.dockerignore', () => {
    const patterns = dockerignorePatterns();

    it('keeps host builds, dependencies, VCS data, local secrets and dev tooling out of the context', () => {
      for (const path of [
        'scripts/compose-smoke.sh',
        '.github/workflows/compose-smoke.yml',
        'deploy/kubernetes/kustomization.yaml',
        'node_modules/yaml/package.json',
        'dist/cli.js',
        '.git/HEAD',
        '.env',
        'coverage/index.html',
      ]) {
        expect(isDockerignored(path, patterns), path).toBe(true);
      }
    });

    it('keeps what the Dockerfile copies', () => {
      for (const path of [
        'package.json',
        'package-lock.json',
        'tsconfig.json',
        'tsconfig.build.json',
        'scripts/bundle.ts',
        'api-extractor.json',
        'README.md',
        'CHANGELOG.md',
        'src/cli.ts',
        'LICENSE',
      ]) {
        expect(isDockerignored(path, patterns), path).toBe(false);
      }
    });
  });

  describe('production dependencies', () => {
    const lock = mapAt(readRepoJson('package-lock.json'), 'package-lock.json');
    const packages = mapAt(lock.packages, 'package-lock.json: packages');

    /** Where npm finds `name` from the package at `from` (node_modules lookup, upwards). */
    const resolvePackage = (from: string, name: string): string | undefined => {
      for (let base = from; ;) {
        const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
        if (candidate in packages) return candidate;
        if (base === '') return undefined;
        const parent = base.lastIndexOf('/node_modules/');
        base = parent === -1 ? '' : base.slice(0, parent);
      }
    };

    /** Every lockfile package `npm ci --omit=dev` installs: dependencies and peers, transitively. */
    const productionClosure = (): Map<string, Record<string, unknown>> => {
      const closure = new Map<string, Record<string, unknown>>();
      const visit = (from: string, names: Record<string, unknown>, optional: boolean): void => {
        for (const name of Object.keys(names)) {
          const path = resolvePackage(from, name);
          if (path === undefined) {
            expect(
              optional,
              `${from || 'package.json'} needs ${name}, missing from the lockfile`,
            ).toBe(true);
            continue;
          }
          if (closure.has(path)) continue;
          const entry = mapAt(packages[path], path);
          closure.set(path, entry);
          const peerMeta = isYamlMap(entry.peerDependenciesMeta) ? entry.peerDependenciesMeta : {};
          const requiredPeers = Object.fromEntries(
            Object.entries(isYamlMap(entry.peerDependencies) ? entry.peerDependencies : {}).filter(
              ([peer]) => !(isYamlMap(peerMeta[peer]) && peerMeta[peer].optional === true),
            ),
          );
          visit(path, isYamlMap(entry.dependencies) ? entry.dependencies : {}, false);
          visit(path, requiredPeers, false);
          visit(
            path,
            isYamlMap(entry.optionalDependencies) ? entry.optionalDependencies : {},
            true,
          );
        }
      };
      visit('', isYamlMap(packageJson.dependencies) ? packageJson.dependencies : {}, false);
      const rootPeerMeta = isYamlMap(packageJson.peerDependenciesMeta)
        ? packageJson.peerDependenciesMeta
        : {};
      const rootRequiredPeers = Object.fromEntries(
        Object.entries(
          isYamlMap(packageJson.peerDependencies) ? packageJson.peerDependencies : {},
        ).filter(
          ([peer]) => !(isYamlMap(rootPeerMeta[peer]) && rootPeerMeta[peer].optional === true),
        ),
      );
      visit('', rootRequiredPeers, false);
      return closure;
    };

    /** Production packages with install scripts that --ignore-scripts may skip, and why. */
    const HARMLESS_INSTALL_SCRIPTS: Readonly<Record<string, string>> = {
      // scripts/postinstall.js only warns when a dependent pins an incompatible version scheme.
      protobufjs: 'postinstall prints a version-scheme warning; nothing is built',
    };

    it('has no runtime dependencies: the install is the package and its one required peer', () => {
      expect(packageJson.dependencies).toBeUndefined();
      const closure = productionClosure();
      expect([...closure.keys()]).toEqual(['node_modules/@opentelemetry/api']);
    });

    it('needs no install script, so --ignore-scripts loses nothing', () => {
      const withScripts = [...productionClosure()]
        .filter(([, entry]) => entry.hasInstallScript === true)
        .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
      for (const name of withScripts) {
        expect(Object.keys(HARMLESS_INSTALL_SCRIPTS), `${name} has an install script`).toContain(
          name,
        );
      }
    });
  });
});
