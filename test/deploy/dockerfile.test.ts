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

describe('Dockerfile', () => {
  describe('base image', () => {
    it('uses one exact Node 20 slim release for every stage', () => {
      const images = new Set(dockerfile.stages.map((stage) => stage.image));
      expect(images.size).toBe(1);
      const [image] = images;
      expect(image).toMatch(/^node:20\.\d+\.\d+-[a-z]+-slim$/);
    });

    it("satisfies package.json's engines.node", () => {
      const engines = mapAt(packageJson.engines, 'package.json: engines');
      const minimum = /^>=(\d+)\.(\d+)/.exec(stringAt(engines.node, 'engines.node'));
      const version = /^node:(\d+)\.(\d+)\./.exec(runtime.image);
      expect(minimum).not.toBeNull();
      expect(Number(version![1])).toBe(Number(minimum![1]));
      expect(Number(version![2])).toBeGreaterThanOrEqual(Number(minimum![2]));
    });
  });

  describe('build stage', () => {
    it('installs every dependency from the lockfile before copying the sources', () => {
      const runs = instructionsOf(build, 'RUN');
      const install = runs.find((run) => /\bnpm ci\b/.test(run.args));
      expect(install?.args).not.toMatch(/--omit=dev/);
      // `prepare` runs the build, and the sources are not there yet.
      expect(install?.args).toMatch(/--ignore-scripts/);
      const copiesSources = instructionsOf(build, 'COPY').find((copy) => /\bsrc\b/.test(copy.args));
      expect(install!.line).toBeLessThan(copiesSources!.line);
    });

    it("runs package.json's build script, which compiles with tsconfig.build.json and bundles the command", () => {
      expect(instructionsOf(build, 'RUN').some((run) => /\bnpm run build\b/.test(run.args))).toBe(
        true,
      );
      const scripts = mapAt(packageJson.scripts, 'package.json: scripts');
      expect(scripts.build).toBe('tsc -p tsconfig.build.json && tsx scripts/bundle-cli.ts');
    });

    it('copies every file the build reads and nothing .dockerignore leaves out', () => {
      expect(stageFiles.get('build')!.missingSources).toEqual([]);
      const files = stageFiles.get('build')!.files;
      const workdir = stageFiles.get('build')!.workdir;
      for (const file of ['package.json', 'package-lock.json', 'tsconfig.build.json']) {
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
    it('installs production dependencies only, without lifecycle scripts', () => {
      const install = instructionsOf(runtime, 'RUN').find((run) => /\bnpm ci\b/.test(run.args));
      expect(install?.args).toMatch(/--omit=dev/);
      expect(install?.args).toMatch(/--ignore-scripts/);
      expect(runtimeFiles.missingSources).toEqual([]);
      for (const file of ['package.json', 'package-lock.json']) {
        expect(runtimeFiles.files.has(posix.join(runtimeFiles.workdir, file)), file).toBe(true);
      }
    });

    it('holds the compiled CLI, copied from the build stage, and no TypeScript sources', () => {
      expect(runtimeFiles.files.has(posix.join(runtimeFiles.workdir, binPath()))).toBe(true);
      expect(
        [...runtimeFiles.files].filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
      ).toEqual([]);
    });

    it('runs as the unprivileged node user', () => {
      const user = lastInstruction(runtime, 'USER')?.args;
      expect(user).toBe('node');
    });

    it('has ENTRYPOINT tooltrace, linked on PATH to the compiled bin', () => {
      const [command, ...rest] = exec('ENTRYPOINT');
      expect(command).toBe('tooltrace');
      expect(rest).toEqual([]);
      const link = instructionsOf(runtime, 'RUN')
        .map((run) => /\bln -s (\S+) (\S+)/.exec(run.args))
        .find((match) => match !== null);
      expect(link, 'a RUN links the bin onto PATH').toBeDefined();
      const [, target, linkPath] = link!;
      expect(linkPath).toBe(`/usr/local/bin/${command}`);
      expect(target).toBe(posix.join(runtimeFiles.workdir, binPath()));
      expect(runtimeFiles.files.has(target!)).toBe(true);
      expect(
        instructionsOf(runtime, 'RUN').some((run) =>
          new RegExp(`chmod (0?755|\\+x) ${target!.replace(/[.]/g, '\\.')}`).test(run.args),
        ),
      ).toBe(true);
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
        'scripts/bundle-cli.ts',
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
      visit('', isYamlMap(packageJson.peerDependencies) ? packageJson.peerDependencies : {}, false);
      return closure;
    };

    /** Production packages with install scripts that --ignore-scripts may skip, and why. */
    const HARMLESS_INSTALL_SCRIPTS: Readonly<Record<string, string>> = {
      // scripts/postinstall.js only warns when a dependent pins an incompatible version scheme.
      protobufjs: 'postinstall prints a version-scheme warning; nothing is built',
    };

    it('finds every dependency and required peer in the lockfile', () => {
      const closure = productionClosure();
      expect(closure.has('node_modules/@opentelemetry/api')).toBe(true);
      for (const name of Object.keys(mapAt(packageJson.dependencies, 'dependencies'))) {
        expect(closure.has(`node_modules/${name}`), name).toBe(true);
      }
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
