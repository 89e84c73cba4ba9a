import { posix } from 'node:path';
import { readRepoYaml } from './repo-files.js';
import {
  isYamlMap,
  listAt,
  mapAt,
  numberAt,
  optionalMapAt,
  stringAt,
  stringListAt,
  type YamlMap,
} from './yaml-shape.js';

/** The compose file at the repository root. */
export const COMPOSE_FILE = 'docker-compose.yml';

/** A `ports:` entry of a service. */
export interface PortMapping {
  /** The host address it binds (`127.0.0.1`), or `undefined` for every interface. */
  hostIp: string | undefined;
  /** The host port (or range) as written, or `undefined` for a random one. */
  published: string | undefined;
  /** The container port. */
  target: number;
}

/** A `volumes:` bind mount of a service. */
export interface BindMount {
  /** The host path as written (`./deploy/tempo/tempo.yaml`). */
  source: string;
  /** The path inside the container. */
  target: string;
  readOnly: boolean;
}

/** A service's `healthcheck:`: its test command, or `disabled`. */
export type ComposeHealthcheck = { test: string[] } | 'disabled';

/** One compose service, shaped for checks. Values are as written: nothing is interpolated. */
export interface ComposeService {
  name: string;
  image: string | undefined;
  /** The build context, when the service is built from this repository. */
  buildContext: string | undefined;
  /** The build's Dockerfile path relative to the context (compose's default is `Dockerfile`). */
  dockerfile: string;
  /** `command:` as a list, or `undefined` to use the image's CMD. */
  command: string[] | undefined;
  /** `entrypoint:` as a list, or `undefined` to use the image's ENTRYPOINT. */
  entrypoint: string[] | undefined;
  environment: Record<string, string>;
  ports: PortMapping[];
  /** `depends_on:` service names with their condition (`service_started` when not written). */
  dependsOn: Record<string, string>;
  volumes: BindMount[];
  healthcheck: ComposeHealthcheck | undefined;
  raw: YamlMap;
}

/** A parsed compose file. */
export interface ComposeFile {
  file: string;
  services: Record<string, ComposeService>;
}

/** The repository path of a built service's Dockerfile (its context joined with its dockerfile). */
export function dockerfilePath(service: ComposeService): string | undefined {
  if (service.buildContext === undefined) return undefined;
  return posix.normalize(posix.join(service.buildContext, service.dockerfile));
}

/** Reads and shapes the compose file; throws naming the service and key when malformed. */
export function loadCompose(file: string = COMPOSE_FILE): ComposeFile {
  const root = mapAt(readRepoYaml(file), file);
  const services: Record<string, ComposeService> = {};
  for (const [name, value] of Object.entries(mapAt(root.services, `${file}: services`))) {
    services[name] = shapeService(name, mapAt(value, `${file}: services.${name}`), file);
  }
  return { file, services };
}

/** The service by name; throws listing the services that exist when there is none. */
export function serviceNamed(compose: ComposeFile, name: string): ComposeService {
  const service = compose.services[name];
  if (service === undefined) {
    throw new Error(
      `${compose.file} has no service ${name} (it has ${Object.keys(compose.services).join(', ')})`,
    );
  }
  return service;
}

/** Parses one `ports:` entry, short (`"127.0.0.1:3000:3000"`) or long (`{ target: 3000 }`). */
export function parsePortMapping(entry: unknown, where: string): PortMapping {
  if (isYamlMap(entry)) {
    return {
      hostIp: entry.host_ip === undefined ? undefined : stringAt(entry.host_ip, `${where}.host_ip`),
      published:
        entry.published === undefined
          ? undefined
          : String(numberAt(entry.published, `${where}.published`)),
      target: numberAt(entry.target, `${where}.target`),
    };
  }
  const text = typeof entry === 'number' ? String(entry) : stringAt(entry, where);
  const withoutProtocol = text.replace(/\/(tcp|udp)$/, '');
  const parts = withoutProtocol.split(':');
  const target = numberAt(parts.at(-1), `${where} (container port)`);
  if (parts.length === 1) return { hostIp: undefined, published: undefined, target };
  if (parts.length === 2) return { hostIp: undefined, published: parts[0], target };
  return { hostIp: parts.slice(0, -2).join(':'), published: parts.at(-2), target };
}

/**
 * Interpolates compose variables the way `docker compose` does: `$$` is a literal `$`;
 * `${NAME}` and `$NAME`; `${NAME:-default}` (unset or empty), `${NAME-default}` (unset);
 * `${NAME:?message}` and `${NAME?message}` throw when the variable is missing.
 */
export function interpolate(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const pattern =
    /\$\$|\$\{(?<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?<operator>:?[-?])(?<argument>[^}]*))?\}|\$(?<bare>[A-Za-z_][A-Za-z0-9_]*)/g;
  return text.replace(pattern, (match, ...rest) => {
    if (match === '$$') return '$';
    const groups = rest.at(-1) as Record<string, string | undefined>;
    const name = (groups.braced ?? groups.bare)!;
    const value = env[name];
    const operator = groups.operator;
    const unsetOrEmpty = value === undefined || value === '';
    const missing = operator?.startsWith(':') === true ? unsetOrEmpty : value === undefined;
    if (operator?.endsWith('-') === true) return missing ? (groups.argument ?? '') : value!;
    if (operator?.endsWith('?') === true && missing) {
      throw new Error(`variable ${name} is required: ${groups.argument ?? ''}`);
    }
    return value ?? '';
  });
}

function shapeService(name: string, raw: YamlMap, file: string): ComposeService {
  const where = `${file}: services.${name}`;
  const build = raw.build;
  let buildContext: string | undefined;
  let dockerfile = 'Dockerfile';
  if (typeof build === 'string') buildContext = build;
  else if (isYamlMap(build)) {
    buildContext = build.context === undefined ? '.' : stringAt(build.context, `${where}.build`);
    if (build.dockerfile !== undefined) dockerfile = stringAt(build.dockerfile, `${where}.build`);
  }
  return {
    name,
    image: raw.image === undefined ? undefined : stringAt(raw.image, `${where}.image`),
    buildContext,
    dockerfile,
    command: commandList(raw.command, `${where}.command`),
    entrypoint: commandList(raw.entrypoint, `${where}.entrypoint`),
    environment: environmentOf(raw.environment, `${where}.environment`),
    ports:
      raw.ports === undefined
        ? []
        : listAt(raw.ports, `${where}.ports`).map((entry, index) =>
            parsePortMapping(entry, `${where}.ports[${index}]`),
          ),
    dependsOn: dependsOnOf(raw.depends_on, `${where}.depends_on`),
    volumes:
      raw.volumes === undefined
        ? []
        : listAt(raw.volumes, `${where}.volumes`).map((entry, index) =>
            bindMountOf(entry, `${where}.volumes[${index}]`),
          ),
    healthcheck: healthcheckOf(raw.healthcheck, `${where}.healthcheck`),
    raw,
  };
}

function commandList(value: unknown, where: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.split(/\s+/).filter((part) => part !== '');
  return stringListAt(value, where);
}

function environmentOf(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  const environment: Record<string, string> = {};
  if (Array.isArray(value)) {
    for (const [index, entry] of stringListAt(value, where).entries()) {
      const separator = entry.indexOf('=');
      if (separator <= 0) throw new Error(`${where}[${index}]: ${entry} is not NAME=value`);
      environment[entry.slice(0, separator)] = entry.slice(separator + 1);
    }
    return environment;
  }
  for (const [key, entry] of Object.entries(mapAt(value, where))) {
    environment[key] =
      typeof entry === 'number' || typeof entry === 'boolean'
        ? String(entry)
        : stringAt(entry, `${where}.${key}`);
  }
  return environment;
}

function dependsOnOf(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (Array.isArray(value)) {
    return Object.fromEntries(stringListAt(value, where).map((name) => [name, 'service_started']));
  }
  const dependsOn: Record<string, string> = {};
  for (const [name, settings] of Object.entries(mapAt(value, where))) {
    const condition = optionalMapAt(settings, `${where}.${name}`).condition;
    dependsOn[name] =
      condition === undefined ? 'service_started' : stringAt(condition, `${where}.${name}`);
  }
  return dependsOn;
}

function bindMountOf(entry: unknown, where: string): BindMount {
  if (isYamlMap(entry)) {
    return {
      source: stringAt(entry.source, `${where}.source`),
      target: stringAt(entry.target, `${where}.target`),
      readOnly: entry.read_only === true,
    };
  }
  const [source, target, mode] = stringAt(entry, where).split(':');
  if (source === undefined || target === undefined) {
    throw new Error(`${where}: expected source:target[:mode]`);
  }
  return { source, target, readOnly: mode?.split(',').includes('ro') === true };
}

function healthcheckOf(value: unknown, where: string): ComposeHealthcheck | undefined {
  if (value === undefined || value === null) return undefined;
  const settings = mapAt(value, where);
  if (settings.disable === true) return 'disabled';
  const test = settings.test;
  if (typeof test === 'string') return { test: ['CMD-SHELL', test] };
  const list = stringListAt(test, `${where}.test`);
  return list[0] === 'NONE' ? 'disabled' : { test: list };
}
