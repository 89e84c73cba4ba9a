import { posix } from 'node:path';
import { loadCollectorConfig, receiverListeners } from './collector-config.js';
import type { ComposeFile, ComposeService } from './compose-file.js';
import { parseEndpoint } from './endpoint.js';
import { readRepoYaml } from './repo-files.js';
import { isYamlMap, mapAt, numberAt, optionalMapAt, stringAt } from './yaml-shape.js';

/** What a port speaks. */
export type ListenerProtocol = 'otlp-grpc' | 'otlp-http' | 'http' | 'grpc';

/** An OpenTelemetry signal, as a collector pipeline id starts (`traces`, `metrics/x`, …). */
export type Signal = 'traces' | 'metrics' | 'logs';

/** A port a compose service listens on inside the compose network. */
export interface ServiceListener {
  port: number;
  protocol: ListenerProtocol;
  /** The address it binds (`0.0.0.0`), when its config says. */
  host: string | undefined;
  /** What it is, for messages: `OTLP/HTTP receiver`, `query API`, … */
  purpose: string;
  /**
   * OTLP/HTTP only: the path the signal paths (`/v1/traces`, `/v1/metrics`) go below, which is
   * what an OTLP/HTTP exporter's base `endpoint` must end in. `undefined` means `/`.
   */
  basePath?: string;
  /** OTLP only: the signals the service keeps. `undefined` means every signal (a collector). */
  signals?: readonly Signal[];
  /** Where this was read from, for messages. */
  source: string;
}

/**
 * Jaeger v2's ports, from its built-in all-in-one configuration (cmd/jaeger/internal/all-in-one.yaml
 * in jaegertracing/jaeger), which binds `${JAEGER_LISTEN_HOST}`; the image sets that to 0.0.0.0.
 * Jaeger reads no config file in this stack, so these cannot be derived from one.
 */
export const JAEGER_V2_LISTENERS: readonly Omit<ServiceListener, 'source'>[] = [
  { port: 4317, protocol: 'otlp-grpc', host: '0.0.0.0', purpose: 'OTLP/gRPC receiver' },
  { port: 4318, protocol: 'otlp-http', host: '0.0.0.0', purpose: 'OTLP/HTTP receiver' },
  { port: 16686, protocol: 'http', host: '0.0.0.0', purpose: 'UI and query API' },
  { port: 13133, protocol: 'http', host: '0.0.0.0', purpose: 'health (/status)' },
];

/** Grafana's HTTP port unless GF_SERVER_HTTP_PORT says otherwise. */
export const GRAFANA_DEFAULT_PORT = 3000;

/** Prometheus's address unless `--web.listen-address` says otherwise. */
export const PROMETHEUS_DEFAULT_ADDRESS = '0.0.0.0:9090';

/**
 * Where Prometheus (3.x) serves its OTLP receiver when started with `--web.enable-otlp-receiver`:
 * metrics only, at `/api/v1/otlp/v1/metrics`, on its one HTTP port.
 */
export const PROMETHEUS_OTLP_BASE_PATH = '/api/v1/otlp';

/**
 * What every compose service listens on, derived from the configuration each one really runs
 * with: the collector from the file mounted at its `--config`, Tempo from the file at its
 * `-config.file`, Prometheus from its flags (`--web.listen-address`, `--web.enable-otlp-receiver`),
 * the sidecar from its `--listen` flags. Services it knows nothing about get an empty list.
 */
export function serviceListeners(compose: ComposeFile): Record<string, ServiceListener[]> {
  const listeners: Record<string, ServiceListener[]> = {};
  for (const service of Object.values(compose.services)) {
    listeners[service.name] = listenersOf(service);
  }
  return listeners;
}

/**
 * The repository path of the file mounted at `containerPath` in the service, or throws when
 * nothing from the repository is mounted there.
 */
export function mountedRepoFile(service: ComposeService, containerPath: string): string {
  const mount = service.volumes.find((volume) => volume.target === containerPath);
  if (mount === undefined || !mount.source.startsWith('.')) {
    throw new Error(`service ${service.name} mounts no repository file at ${containerPath}`);
  }
  return posix.normalize(mount.source);
}

/**
 * The value of a command-line flag in a list of arguments: `--name=value`, `-name=value`, or
 * the next argument after `--name`. Every occurrence, in order.
 */
export function flagValues(args: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (const [index, arg] of args.entries()) {
    if (arg.startsWith(`${name}=`)) values.push(arg.slice(name.length + 1));
    else if (arg === name && index + 1 < args.length) values.push(args[index + 1]!);
  }
  return values;
}

/** The collector configuration file a collector service runs with (its `--config`). */
export function collectorConfigFile(service: ComposeService): string {
  const [configPath] = flagValues(service.command ?? [], '--config');
  if (configPath === undefined) throw new Error(`service ${service.name} has no --config flag`);
  return mountedRepoFile(service, configPath);
}

/** The Prometheus configuration file a Prometheus service runs with (its `--config.file`). */
export function prometheusConfigFile(service: ComposeService): string {
  const [configPath] = flagValues(service.command ?? [], '--config.file');
  if (configPath === undefined)
    throw new Error(`service ${service.name} has no --config.file flag`);
  return mountedRepoFile(service, configPath);
}

/** Whether a boolean flag is on: `--name` or `--name=true`. */
export function flagIsSet(args: readonly string[], name: string): boolean {
  return args.includes(name) || flagValues(args, name).at(-1) === 'true';
}

/** The Tempo configuration file a Tempo service runs with (its `-config.file`). */
export function tempoConfigFile(service: ComposeService): string {
  const [configPath] = flagValues(service.command ?? [], '-config.file');
  if (configPath === undefined) throw new Error(`service ${service.name} has no -config.file flag`);
  return mountedRepoFile(service, configPath);
}

/** Whether the service runs an image with that repository name (any tag). */
export function runsImage(service: ComposeService, repository: string): boolean {
  return service.image?.split(':', 1)[0] === repository;
}

function listenersOf(service: ComposeService): ServiceListener[] {
  if (runsImage(service, 'otel/opentelemetry-collector-contrib'))
    return collectorListeners(service);
  if (runsImage(service, 'grafana/tempo')) return tempoListeners(service);
  if (runsImage(service, 'jaegertracing/jaeger')) {
    return JAEGER_V2_LISTENERS.map((listener) => ({
      ...listener,
      ...(listener.protocol.startsWith('otlp') ? { signals: ['traces' as const] } : {}),
      source: 'Jaeger v2 defaults',
    }));
  }
  if (runsImage(service, 'prom/prometheus')) return prometheusListeners(service);
  if (runsImage(service, 'grafana/grafana')) {
    const port = service.environment.GF_SERVER_HTTP_PORT;
    return [
      {
        port: port === undefined ? GRAFANA_DEFAULT_PORT : Number(port),
        protocol: 'http',
        host: undefined,
        purpose: 'UI and API',
        source: 'Grafana defaults',
      },
    ];
  }
  if (service.buildContext !== undefined && service.command?.[0] === 'sidecar') {
    return flagValues(service.command, '--listen').map((address) => {
      const endpoint = parseEndpoint(address, `service ${service.name} --listen`);
      return {
        port: endpoint.port,
        protocol: 'http',
        host: endpoint.host,
        purpose: 'event intake, /healthz, /metrics',
        source: `${service.name} --listen`,
      };
    });
  }
  return [];
}

function collectorListeners(service: ComposeService): ServiceListener[] {
  const file = collectorConfigFile(service);
  const config = loadCollectorConfig(file);
  const listeners: ServiceListener[] = receiverListeners(config).map((listener) => ({
    port: listener.endpoint.port,
    protocol:
      listener.receiver.startsWith('otlp') && listener.protocol === 'grpc'
        ? 'otlp-grpc'
        : listener.receiver.startsWith('otlp') && listener.protocol === 'http'
          ? 'otlp-http'
          : 'http',
    host: listener.endpoint.host,
    purpose:
      listener.protocol === undefined
        ? `${listener.receiver} receiver`
        : `${listener.receiver} ${listener.protocol} receiver`,
    source: file,
  }));
  for (const [id, value] of Object.entries(config.extensions)) {
    const settings = optionalMapAt(value, `${file}: extensions.${id}`);
    if (typeof settings.endpoint === 'string') {
      const endpoint = parseEndpoint(settings.endpoint, `${file}: extensions.${id}.endpoint`);
      listeners.push({
        port: endpoint.port,
        protocol: 'http',
        host: endpoint.host,
        purpose: `${id} extension`,
        source: file,
      });
    }
  }
  return listeners;
}

function prometheusListeners(service: ComposeService): ServiceListener[] {
  const args = service.command ?? [];
  const source = `${service.name} command`;
  const address = flagValues(args, '--web.listen-address').at(-1) ?? PROMETHEUS_DEFAULT_ADDRESS;
  // Go's listen addresses may leave the host out (`:9090`): every interface.
  const endpoint = parseEndpoint(
    address.startsWith(':') ? `0.0.0.0${address}` : address,
    `service ${service.name} --web.listen-address`,
  );
  const listeners: ServiceListener[] = [
    {
      port: endpoint.port,
      protocol: 'http',
      host: endpoint.host,
      purpose: 'UI and query API',
      source,
    },
  ];
  if (flagIsSet(args, '--web.enable-otlp-receiver')) {
    listeners.push({
      port: endpoint.port,
      protocol: 'otlp-http',
      host: endpoint.host,
      purpose: 'OTLP/HTTP receiver',
      basePath: PROMETHEUS_OTLP_BASE_PATH,
      signals: ['metrics'],
      source,
    });
  }
  return listeners;
}

function tempoListeners(service: ComposeService): ServiceListener[] {
  const file = tempoConfigFile(service);
  const root = mapAt(readRepoYaml(file), file);
  const server = optionalMapAt(root.server, `${file}: server`);
  const listeners: ServiceListener[] = [
    {
      port:
        server.http_listen_port === undefined
          ? 80
          : numberAt(server.http_listen_port, `${file}: server.http_listen_port`),
      protocol: 'http',
      host: undefined,
      purpose: 'query API',
      source: file,
    },
    {
      port:
        server.grpc_listen_port === undefined
          ? 9095
          : numberAt(server.grpc_listen_port, `${file}: server.grpc_listen_port`),
      protocol: 'grpc',
      host: undefined,
      purpose: 'internal gRPC',
      source: file,
    },
  ];
  const distributor = optionalMapAt(root.distributor, `${file}: distributor`);
  const receivers = optionalMapAt(distributor.receivers, `${file}: distributor.receivers`);
  const otlp = optionalMapAt(receivers.otlp, `${file}: distributor.receivers.otlp`);
  if (isYamlMap(otlp.protocols)) {
    for (const [protocol, value] of Object.entries(otlp.protocols)) {
      const where = `${file}: distributor.receivers.otlp.protocols.${protocol}`;
      const endpoint = parseEndpoint(
        stringAt(optionalMapAt(value, where).endpoint, `${where}.endpoint`),
        where,
      );
      listeners.push({
        port: endpoint.port,
        protocol: protocol === 'grpc' ? 'otlp-grpc' : 'otlp-http',
        host: endpoint.host,
        purpose: `OTLP ${protocol} receiver`,
        signals: ['traces'],
        source: file,
      });
    }
  }
  return listeners;
}
