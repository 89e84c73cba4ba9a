import { posix } from 'node:path';
import {
  COMPOSE_FILE,
  dockerfilePath,
  interpolate,
  loadCompose,
  serviceNamed,
} from './compose-file.js';
import { execForm, lastInstruction, parseDockerfile, type Dockerfile } from './dockerfile.js';
import { readRepoText } from './repo-files.js';

/** The host every compose service name (and `0.0.0.0`) is replaced with. */
export const LOCAL_HOST = '127.0.0.1';

/** How {@link composeServiceCommand} reads the compose file and rewrites addresses. */
export interface ComposeCommandOptions {
  /**
   * The compose file, relative to the repository root.
   * @default 'docker-compose.yml'
   */
  composeFile?: string;
  /**
   * The variables `${NAME:-default}` in the compose file are interpolated with, as
   * `docker compose` would take them from the shell. Empty by default, so the compose file's own
   * defaults apply and a test does not depend on the caller's environment.
   * @default {}
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Ports to rewrite, keyed by the port written in the compose file: `{ 4318: receiver.port }`
   * points the OTLP endpoint at a test receiver, `{ 4319: freePort }` moves the listen address.
   * Only ports in rewritten addresses (`service:port`, `0.0.0.0:port`) change.
   * @default {}
   */
  ports?: Readonly<Record<number, number>>;
}

/**
 * A compose service's process as it would start, ready to run on this machine: the
 * ENTRYPOINT (the compose file's, else the service's Dockerfile's), the arguments (the compose
 * `command`, else the Dockerfile's CMD) and the `environment`, interpolated, with every compose
 * service name and `0.0.0.0` in a `host:port` replaced by 127.0.0.1.
 */
export interface ComposeCommand {
  service: string;
  /** What the container runs first: `['tooltrace']` for the tooltrace image. */
  entrypoint: string[];
  /** The arguments after the entrypoint: `['sidecar', '--listen', '127.0.0.1:4319']`. */
  args: string[];
  /** The service's environment variables, only those the compose file sets. */
  env: Record<string, string>;
}

/**
 * Reads a compose service's command line and environment for running it outside Docker.
 *
 * A test can start the sidecar exactly as docker-compose.yml does, against the in-process OTLP
 * receiver:
 *
 * ```ts
 * const command = composeServiceCommand('sidecar', { ports: { 4318: receiverPort, 4319: intakePort } });
 * // command.entrypoint is ['tooltrace'], the package bin: run it from source instead.
 * spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...command.args], {
 *   env: { ...process.env, ...command.env },
 * });
 * ```
 */
export function composeServiceCommand(
  service: string,
  options: ComposeCommandOptions = {},
): ComposeCommand {
  const composeFile = options.composeFile ?? COMPOSE_FILE;
  const compose = loadCompose(composeFile);
  const definition = serviceNamed(compose, service);
  const dockerfileFile = dockerfilePath(definition);
  const dockerfile =
    dockerfileFile === undefined
      ? undefined
      : parseDockerfile(readRepoText(posix.join(posix.dirname(composeFile), dockerfileFile)));
  const entrypoint = definition.entrypoint ?? imageList(dockerfile, 'ENTRYPOINT', service);
  const args = definition.command ?? imageList(dockerfile, 'CMD', service);
  const hosts = [...Object.keys(compose.services), '0.0.0.0'];
  const env = options.env ?? {};
  const rewrite = (text: string): string =>
    rewriteAddresses(interpolate(text, env), hosts, options.ports ?? {});
  return {
    service,
    entrypoint: entrypoint.map(rewrite),
    args: args.map(rewrite),
    env: Object.fromEntries(
      Object.entries(definition.environment).map(([name, value]) => [name, rewrite(value)]),
    ),
  };
}

/** {@link composeServiceCommand} for the `sidecar` service. */
export function sidecarCommand(options: ComposeCommandOptions = {}): ComposeCommand {
  return composeServiceCommand('sidecar', options);
}

/**
 * Replaces `host:port` where host is one of `hosts` (not part of a longer name) with
 * 127.0.0.1, and the port by `ports[port]` when given.
 */
export function rewriteAddresses(
  text: string,
  hosts: readonly string[],
  ports: Readonly<Record<number, number>>,
): string {
  const alternatives = [...hosts]
    .sort((left, right) => right.length - left.length)
    .map((host) => host.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'))
    .join('|');
  const pattern = new RegExp(`(?<![\\w.-])(?:${alternatives}):(\\d{1,5})(?!\\d)`, 'g');
  return text.replace(pattern, (_match, port: string) => {
    const replacement = ports[Number(port)];
    return `${LOCAL_HOST}:${replacement ?? port}`;
  });
}

function imageList(dockerfile: Dockerfile | undefined, keyword: string, service: string): string[] {
  const stage = dockerfile?.stages.at(-1);
  const instruction = stage === undefined ? undefined : lastInstruction(stage, keyword);
  if (instruction === undefined) {
    throw new Error(`service ${service}: neither the compose file nor its image sets ${keyword}`);
  }
  return execForm(instruction.args) ?? ['/bin/sh', '-c', instruction.args];
}
