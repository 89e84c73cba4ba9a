import { describe, expect, it } from 'vitest';
import { exporterTargets, loadCollectorConfig, receiverListeners } from './collector-config.js';
import {
  dockerfilePath,
  interpolate,
  loadCompose,
  serviceNamed,
  type ComposeService,
} from './compose-file.js';
import { lastInstruction, parseDockerfile, parseHealthcheck } from './dockerfile.js';
import { parseEndpoint } from './endpoint.js';
import { readRepoText, readRepoYaml, repoFileExists } from './repo-files.js';
import {
  collectorConfigFile,
  flagIsSet,
  flagValues,
  prometheusConfigFile,
  runsImage,
  serviceListeners,
  tempoConfigFile,
  type ListenerProtocol,
  type ServiceListener,
  type Signal,
} from './service-listeners.js';
import { listAt, mapAt, numberAt, stringAt, stringListAt } from './yaml-shape.js';

const compose = loadCompose();
const services = Object.values(compose.services);
const listeners = serviceListeners(compose);

/**
 * Ports only other containers use: OTLP, health, Tempo's APIs, collector telemetry, and
 * Prometheus (no authentication, and its OTLP receiver takes writes; Grafana queries it).
 */
const INTERNAL_PORTS = [4317, 4318, 13133, 3200, 9095, 8888, 9090];
const DATASOURCES_FILE = 'deploy/grafana/provisioning/datasources/datasources.yaml';

/** The one service running an image from that repository. */
function serviceRunning(repository: string): ComposeService {
  const matching = services.filter((service) => runsImage(service, repository));
  expect(matching.map((service) => service.name)).toHaveLength(1);
  return matching[0]!;
}

/**
 * Fails unless `host:port` is a compose service listening on that port with that protocol;
 * returns that listener.
 */
function expectListening(
  host: string,
  port: number,
  protocols: readonly ListenerProtocol[],
  what: string,
): ServiceListener {
  expect(Object.keys(compose.services), `${what}: ${host} is not a compose service`).toContain(
    host,
  );
  const open = (listeners[host] ?? []).filter((listener) => protocols.includes(listener.protocol));
  expect(
    open.map((listener) => listener.port),
    `${what}: ${host} does not listen on ${port} (${protocols.join(' or ')})`,
  ).toContain(port);
  return open.find((listener) => listener.port === port)!;
}

function imageHealthcheck(service: ComposeService): string[] | undefined {
  const path = dockerfilePath(service);
  if (path === undefined) return undefined;
  const dockerfile = parseDockerfile(readRepoText(path));
  const instruction = lastInstruction(dockerfile.stages.at(-1)!, 'HEALTHCHECK');
  return instruction === undefined ? undefined : parseHealthcheck(instruction.args).command;
}

describe('docker-compose.yml', () => {
  it('has the services of the local stack', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [
        'demo-agent',
        'grafana',
        'jaeger',
        'otel-collector',
        'prometheus',
        'sidecar',
        'tempo',
      ].sort(),
    );
  });

  describe('images', () => {
    it.each(services.filter((service) => service.buildContext === undefined))(
      'pins $name to a released version',
      (service) => {
        const match =
          /^(?<repository>[a-z0-9][a-z0-9./_-]*):(?<tag>[A-Za-z0-9_.-]+)(?:@sha256:[a-f0-9]{64})?$/.exec(
            service.image ?? '',
          );
        expect(match, `${service.name}: ${service.image} has no tag`).not.toBeNull();
        expect(match!.groups!.tag).not.toBe('latest');
        expect(match!.groups!.tag).toMatch(/^v?\d+\.\d+\.\d+(?:[-.][A-Za-z0-9.-]+)?$/);
      },
    );

    it('builds the tooltrace services from this repository under a local tag', () => {
      for (const name of ['sidecar', 'demo-agent']) {
        const service = serviceNamed(compose, name);
        expect(service.buildContext).toBe('.');
        expect(repoFileExists(dockerfilePath(service)!)).toBe(true);
        expect(service.image).toMatch(/^tooltrace:(?!latest$)[\w.-]+$/);
      }
    });
  });

  describe('ports', () => {
    it('publishes no internal port (OTLP, health, Tempo APIs, Prometheus) to the host', () => {
      for (const service of services) {
        for (const port of service.ports) {
          expect(INTERNAL_PORTS, `${service.name} publishes ${port.target}`).not.toContain(
            port.target,
          );
        }
      }
    });

    it('publishes only the Jaeger UI, Grafana and the sidecar intake', () => {
      const published = services.flatMap((service) =>
        service.ports.map((port) => `${service.name}:${port.target}`),
      );
      expect(published.sort()).toEqual(['grafana:3000', 'jaeger:16686', 'sidecar:4319']);
    });

    it('binds every published port to 127.0.0.1 only (Grafana has anonymous admin access)', () => {
      for (const service of services) {
        for (const port of service.ports) {
          expect(port.hostIp, `${service.name}:${port.target}`).toBe('127.0.0.1');
          expect(port.published).toBe(String(port.target));
        }
      }
    });

    it('publishes only ports the service listens on', () => {
      for (const service of services) {
        for (const port of service.ports) {
          expectListening(service.name, port.target, ['http'], `${service.name} ports`);
        }
      }
    });
  });

  describe('depends_on', () => {
    it('names services that exist, with a condition compose knows', () => {
      for (const service of services) {
        for (const [dependency, condition] of Object.entries(service.dependsOn)) {
          expect(Object.keys(compose.services), `${service.name} → ${dependency}`).toContain(
            dependency,
          );
          expect([
            'service_started',
            'service_healthy',
            'service_completed_successfully',
          ]).toContain(condition);
        }
      }
    });

    it('waits for health only on services that have a health check', () => {
      for (const service of services) {
        for (const [dependency, condition] of Object.entries(service.dependsOn)) {
          if (condition !== 'service_healthy') continue;
          const target = serviceNamed(compose, dependency);
          const check =
            target.healthcheck === undefined ? imageHealthcheck(target) : target.healthcheck;
          expect(check, `${service.name} waits for ${dependency} to be healthy`).toBeDefined();
          expect(check).not.toBe('disabled');
        }
      }
    });

    it('has no cycle', () => {
      const visiting = new Set<string>();
      const done = new Set<string>();
      const visit = (name: string, path: readonly string[]): void => {
        if (done.has(name)) return;
        expect(visiting.has(name), `cycle: ${[...path, name].join(' → ')}`).toBe(false);
        visiting.add(name);
        for (const dependency of Object.keys(serviceNamed(compose, name).dependsOn)) {
          visit(dependency, [...path, name]);
        }
        visiting.delete(name);
        done.add(name);
      };
      for (const name of Object.keys(compose.services)) visit(name, []);
    });

    it('starts the collector and Tempo without waiting on health: their images have no shell', () => {
      for (const name of [
        serviceRunning('otel/opentelemetry-collector-contrib').name,
        serviceRunning('grafana/tempo').name,
      ]) {
        expect(serviceNamed(compose, name).healthcheck).toBeUndefined();
        for (const service of services) {
          expect(service.dependsOn[name] ?? 'service_started').toBe('service_started');
        }
      }
    });
  });

  describe('health checks', () => {
    it('probe a port the service itself listens on, from inside its container', () => {
      for (const service of services) {
        const check = service.healthcheck;
        if (check === undefined || check === 'disabled') continue;
        const urls = check.test.join(' ').match(/https?:\/\/[^\s'"]+/g) ?? [];
        expect(urls, `${service.name} health check has no URL`).toHaveLength(1);
        const endpoint = parseEndpoint(urls[0]!, `${service.name} healthcheck`);
        expect(endpoint.host).toBe('127.0.0.1');
        expect(listeners[service.name]!.map((listener) => listener.port)).toContain(endpoint.port);
      }
    });

    it("lets the sidecar's image health check probe the port compose makes it listen on", () => {
      const sidecar = serviceNamed(compose, 'sidecar');
      expect(sidecar.healthcheck).toBeUndefined();
      const script = imageHealthcheck(sidecar)!.join(' ');
      const url = /http:\/\/127\.0\.0\.1:\d+\/healthz/.exec(script);
      expect(url, 'the image health check asks /healthz on 127.0.0.1').not.toBeNull();
      expectListening(
        'sidecar',
        parseEndpoint(url![0], 'image HEALTHCHECK').port,
        ['http'],
        'HEALTHCHECK',
      );
    });
  });

  describe('OTLP endpoints', () => {
    const collector = serviceRunning('otel/opentelemetry-collector-contrib');

    it('mounts otel-collector-config.yaml as the collector configuration', () => {
      expect(collectorConfigFile(collector)).toBe('otel-collector-config.yaml');
    });

    it('sends every collector exporter to a compose service on a port where it receives OTLP', () => {
      const config = loadCollectorConfig(collectorConfigFile(collector));
      const targets = exporterTargets(config);
      expect(targets.length).toBeGreaterThan(0);
      for (const target of targets) {
        const what = `exporter ${target.exporter}`;
        expect(['otlp_grpc', 'otlp_http'], what).toContain(target.type);
        if (target.type === 'otlp_grpc') {
          expectListening(target.endpoint.host, target.endpoint.port, ['otlp-grpc'], what);
          continue;
        }
        // otlphttp: a base URL, to which the exporter appends /v1/traces, /v1/metrics, …
        expect(target.endpoint.scheme, what).toBe('http');
        const listener = expectListening(
          target.endpoint.host,
          target.endpoint.port,
          ['otlp-http'],
          what,
        );
        expect(target.endpoint.path.replace(/\/$/, '') || '/', what).toBe(listener.basePath ?? '/');
      }
    });

    it('sends each pipeline only to services that keep its signal', () => {
      const config = loadCollectorConfig(collectorConfigFile(collector));
      const targets = exporterTargets(config);
      const pipelineIds = Object.keys(config.pipelines);
      expect(pipelineIds.map((id) => id.split('/', 1)[0]).sort()).toEqual(['metrics', 'traces']);
      for (const [id, pipeline] of Object.entries(config.pipelines)) {
        const signal = id.split('/', 1)[0] as Signal;
        for (const exporter of pipeline.exporters) {
          const target = targets.find((candidate) => candidate.exporter === exporter);
          expect(target, `pipeline ${id}: exporter ${exporter} has an endpoint`).toBeDefined();
          const listener = expectListening(
            target!.endpoint.host,
            target!.endpoint.port,
            target!.type === 'otlp_http' ? ['otlp-http'] : ['otlp-grpc'],
            `pipeline ${id}: exporter ${exporter}`,
          );
          expect(
            listener.signals ?? [signal],
            `pipeline ${id} sends ${signal} to ${target!.endpoint.host}, which keeps ${listener.signals?.join(', ')}`,
          ).toContain(signal);
        }
      }
    });

    it("points the sidecar's OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP receiver", () => {
      const sidecar = serviceNamed(compose, 'sidecar');
      const environment = sidecar.environment;
      expect(environment.OTEL_EXPORTER_OTLP_PROTOCOL).toBe('http/protobuf');
      const endpoint = parseEndpoint(
        environment.OTEL_EXPORTER_OTLP_ENDPOINT ?? '',
        'sidecar OTEL_EXPORTER_OTLP_ENDPOINT',
      );
      expect(endpoint.scheme).toBe('http');
      expect(endpoint.host).toBe(collector.name);
      // The base endpoint: the SDK appends /v1/traces itself.
      expect(endpoint.path).toBe('/');
      expectListening(endpoint.host, endpoint.port, ['otlp-http'], 'sidecar OTLP endpoint');
      expect(sidecar.dependsOn[collector.name]).toBeDefined();
    });

    it("sends the sidecar's metrics to the collector's metrics pipeline every 10 s", () => {
      const environment = serviceNamed(compose, 'sidecar').environment;
      // No metrics endpoint of their own: the SDK sends them to the same collector, /v1/metrics.
      expect(environment.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT).toBeUndefined();
      expect(environment.OTEL_METRICS_EXPORTER ?? 'otlp').toBe('otlp');
      expect(environment.OTEL_METRIC_EXPORT_INTERVAL).toBe('10000');
      const endpoint = parseEndpoint(environment.OTEL_EXPORTER_OTLP_ENDPOINT ?? '', 'endpoint');
      const config = loadCollectorConfig(collectorConfigFile(collector));
      const receiver = receiverListeners(config).find(
        (listener) => listener.protocol === 'http' && listener.endpoint.port === endpoint.port,
      );
      expect(receiver, 'a collector receiver takes OTLP/HTTP on that port').toBeDefined();
      expect(config.pipelines.metrics?.receivers).toContain(receiver!.receiver);
    });

    it('names the service the spans belong to and its resource attributes', () => {
      const environment = serviceNamed(compose, 'sidecar').environment;
      expect(environment.OTEL_SERVICE_NAME).toMatch(/\S/);
      expect(environment.OTEL_RESOURCE_ATTRIBUTES).toMatch(/^([\w.]+=[^,]+)(,[\w.]+=[^,]+)*$/);
    });

    it("gives the collector more memory than memory_limiter's hard limit", () => {
      const config = loadCollectorConfig(collectorConfigFile(collector));
      const limiter = mapAt(config.processors.memory_limiter, 'memory_limiter');
      const limitMiB = numberAt(limiter.limit_mib, 'memory_limiter.limit_mib');
      const memLimit = /^(\d+)m$/i.exec(String(collector.raw.mem_limit));
      expect(memLimit, 'otel-collector mem_limit in megabytes').not.toBeNull();
      expect(Number(memLimit![1])).toBeGreaterThan(limitMiB);
    });
  });

  describe('sidecar and demo agent', () => {
    const sidecar = serviceNamed(compose, 'sidecar');
    const demo = serviceNamed(compose, 'demo-agent');

    it('runs the sidecar on every interface of its container, with a token', () => {
      expect(sidecar.command?.[0]).toBe('sidecar');
      const [listen] = flagValues(sidecar.command ?? [], '--listen');
      expect(parseEndpoint(listen ?? '', 'sidecar --listen').host).toBe('0.0.0.0');
      expect(interpolate(sidecar.environment.TOOLTRACE_TOKEN ?? '', {})).toMatch(/\S{8,}/);
    });

    it("forwards the demo's events to the sidecar's listen port", () => {
      expect(demo.command?.[0]).toBe('demo');
      const [forward] = flagValues(demo.command ?? [], '--forward');
      const endpoint = parseEndpoint(forward ?? '', 'demo-agent --forward');
      expect(endpoint.scheme).toBe('http');
      expect(endpoint.host).toBe('sidecar');
      expectListening(endpoint.host, endpoint.port, ['http'], 'demo-agent --forward');
    });

    it('gives the demo the same token as the sidecar, with or without one in the shell', () => {
      for (const env of [{}, { TOOLTRACE_TOKEN: 'from-the-shell-0123' }]) {
        expect(interpolate(demo.environment.TOOLTRACE_TOKEN ?? '', env)).toBe(
          interpolate(sidecar.environment.TOOLTRACE_TOKEN ?? '', env),
        );
      }
    });

    it('runs the demo once, after the sidecar is healthy, without the image health check', () => {
      expect(demo.raw.restart).toBe('no');
      expect(demo.dependsOn.sidecar).toBe('service_healthy');
      expect(demo.healthcheck).toBe('disabled');
    });
  });

  describe('mounted configuration', () => {
    it('mounts files that exist in the repository, read-only', () => {
      const mounts = services.flatMap((service) => service.volumes);
      expect(mounts.length).toBeGreaterThan(0);
      for (const mount of mounts) {
        expect(mount.source.startsWith('./'), `${mount.source} is a repository path`).toBe(true);
        expect(repoFileExists(mount.source.slice(2)), `${mount.source} exists`).toBe(true);
        expect(mount.readOnly, `${mount.source} is mounted read-only`).toBe(true);
      }
    });

    it('configures Tempo 3 without the 2.x blocks it refuses, retention as a scoped override', () => {
      const tempo = serviceRunning('grafana/tempo');
      expect(Number(/:(\d+)\./.exec(tempo.image ?? '')?.[1])).toBeGreaterThanOrEqual(3);
      const file = tempoConfigFile(tempo);
      const config = mapAt(readRepoYaml(file), file);
      for (const removed of [
        'ingester',
        'ingester_client',
        'compactor',
        'metrics_generator_client',
      ]) {
        expect(Object.keys(config), `${file} has a ${removed} block`).not.toContain(removed);
      }
      const defaults = mapAt(mapAt(config.overrides, 'overrides').defaults, 'overrides.defaults');
      const compaction = mapAt(defaults.compaction, 'overrides.defaults.compaction');
      expect(compaction.block_retention).toMatch(/^\d+h$/);
    });

    it("binds Tempo's OTLP receiver on every interface so the collector reaches it", () => {
      const tempo = serviceRunning('grafana/tempo');
      const otlp = listeners[tempo.name]!.filter((listener) => listener.protocol === 'otlp-grpc');
      expect(otlp.map((listener) => [listener.host, listener.port])).toEqual([['0.0.0.0', 4317]]);
    });
  });

  describe('Prometheus', () => {
    const prometheus = serviceRunning('prom/prometheus');
    const file = prometheusConfigFile(prometheus);
    const config = mapAt(readRepoYaml(file), file);
    const otlp = mapAt(config.otlp, `${file}: otlp`);

    it('runs Prometheus 3 with its OTLP receiver on and deploy/prometheus/prometheus.yml', () => {
      expect(Number(/:v(\d+)\./.exec(prometheus.image ?? '')?.[1])).toBeGreaterThanOrEqual(3);
      expect(flagIsSet(prometheus.command ?? [], '--web.enable-otlp-receiver')).toBe(true);
      expect(file).toBe('deploy/prometheus/prometheus.yml');
    });

    it('accepts samples that arrive out of order, as batched and retried pushes do', () => {
      const storage = mapAt(config.storage, `${file}: storage`);
      const tsdb = mapAt(storage.tsdb, `${file}: storage.tsdb`);
      expect(tsdb.out_of_order_time_window).toMatch(/^\d+[mh]$/);
    });

    it('promotes service.name and every resource attribute the sidecar sets to labels', () => {
      const promoted = stringListAt(
        otlp.promote_resource_attributes,
        `${file}: otlp.promote_resource_attributes`,
      );
      const environment = serviceNamed(compose, 'sidecar').environment;
      const keys = (environment.OTEL_RESOURCE_ATTRIBUTES ?? '')
        .split(',')
        .map((pair) => pair.split('=', 1)[0]!);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of ['service.name', ...keys]) expect(promoted).toContain(key);
    });
  });

  describe('Grafana', () => {
    const grafana = serviceRunning('grafana/grafana');
    const provisioning = grafana.volumes.find(
      (volume) => volume.target === '/etc/grafana/provisioning/datasources',
    );
    const datasources = listAt(
      mapAt(readRepoYaml(DATASOURCES_FILE), DATASOURCES_FILE).datasources,
      `${DATASOURCES_FILE}: datasources`,
    ).map((entry, index) => mapAt(entry, `${DATASOURCES_FILE}: datasources[${index}]`));

    it('provisions data sources from deploy/grafana/provisioning/datasources', () => {
      expect(provisioning?.source).toBe('./deploy/grafana/provisioning/datasources');
      expect(DATASOURCES_FILE.startsWith(`${provisioning!.source.slice(2)}/`)).toBe(true);
    });

    it('provisions Tempo, Jaeger and Prometheus, one of them the default, with distinct uids', () => {
      expect(datasources.map((source) => source.type).sort()).toEqual([
        'jaeger',
        'prometheus',
        'tempo',
      ]);
      expect(datasources.filter((source) => source.isDefault === true)).toHaveLength(1);
      expect(new Set(datasources.map((source) => source.uid)).size).toBe(datasources.length);
    });

    it.each([
      ['tempo', 'grafana/tempo'],
      ['jaeger', 'jaegertracing/jaeger'],
      ['prometheus', 'prom/prometheus'],
    ])('points the %s data source at that service and its query port', (type, image) => {
      const source = datasources.find((candidate) => candidate.type === type)!;
      const endpoint = parseEndpoint(stringAt(source.url, `${type} url`), `${type} data source`);
      const service = serviceRunning(image);
      expect(endpoint.host).toBe(service.name);
      const queryPorts = listeners[service.name]!.filter((listener) =>
        /query/.test(listener.purpose),
      ).map((listener) => listener.port);
      expect(queryPorts).toEqual([endpoint.port]);
      expect(source.access).toBe('proxy');
    });

    it('tells the Prometheus data source how often the sidecar pushes metrics', () => {
      const source = datasources.find((candidate) => candidate.type === 'prometheus')!;
      const jsonData = mapAt(source.jsonData, 'prometheus jsonData');
      const interval = /^(\d+)s$/.exec(stringAt(jsonData.timeInterval, 'timeInterval'));
      expect(interval, 'timeInterval in seconds').not.toBeNull();
      const pushMs = serviceNamed(compose, 'sidecar').environment.OTEL_METRIC_EXPORT_INTERVAL;
      expect(Number(interval![1]) * 1000).toBe(Number(pushMs));
    });

    it('lets anyone on this machine in as admin, and nobody else', () => {
      expect(grafana.environment.GF_AUTH_ANONYMOUS_ENABLED).toBe('true');
      expect(grafana.environment.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe('Admin');
      expect(grafana.ports.map((port) => port.hostIp)).toEqual(['127.0.0.1']);
    });
  });
});
