import { describe, expect, it } from 'vitest';
import {
  componentType,
  loadCollectorConfig,
  receiverListeners,
  undefinedComponents,
  unusedComponents,
  type CollectorConfig,
} from './collector-config.js';
import { loadCompose, serviceNamed } from './compose-file.js';
import { parseEndpoint } from './endpoint.js';
import {
  containersOf,
  KUSTOMIZE_DIR,
  loadKustomization,
  loadManifests,
  mebibytes,
  objectNamed,
  podTemplateOf,
  resolvePort,
  selects,
  type KubernetesObject,
  type PodContainer,
} from './kubernetes-manifests.js';
import { MASKING_PROCESSOR } from './masking-rules.js';
import { listRepoFiles, readRepoJson } from './repo-files.js';
import { flagValues } from './service-listeners.js';
import {
  isYamlMap,
  listAt,
  mapAt,
  numberAt,
  optionalMapAt,
  stringAt,
  type YamlMap,
} from './yaml-shape.js';

const kustomization = loadKustomization();
const objects = loadManifests(kustomization);
const workloads = objects.filter((object) => object.kind === 'Deployment');
const services = objects.filter((object) => object.kind === 'Service');
const agent = objectNamed(objects, 'Deployment', 'example-agent');
const sidecar = containersOf(agent).find((container) => container.name === 'tooltrace-sidecar')!;
const agentContainer = containersOf(agent).find((container) => container.name === 'agent')!;

/** The collector container of a workload and the configuration file its ConfigMap is generated from. */
function collectorOf(workload: KubernetesObject): {
  container: PodContainer;
  config: CollectorConfig;
} {
  const [container] = containersOf(workload);
  const [configPath] = flagValues(container!.args, '--config');
  expect(configPath, `${workload.name} runs the collector with --config`).toBeDefined();
  const spec = mapAt(podTemplateOf(workload).spec, 'pod spec');
  const mount = listAt(container!.raw.volumeMounts, 'volumeMounts')
    .map((entry) => mapAt(entry, 'volumeMount'))
    .find((entry) => configPath!.startsWith(`${stringAt(entry.mountPath, 'mountPath')}/`))!;
  expect(mount, `${workload.name} mounts a volume holding ${configPath}`).toBeDefined();
  const volume = listAt(spec.volumes, 'volumes')
    .map((entry) => mapAt(entry, 'volume'))
    .find((entry) => entry.name === mount.name)!;
  const configMap = stringAt(
    mapAt(volume.configMap, `${workload.name} volume ${String(mount.name)}`).name,
    'configMap.name',
  );
  const files = kustomization.configMaps[configMap];
  expect(
    files,
    `${workload.name} mounts ConfigMap ${configMap}, which kustomization.yaml generates`,
  ).toBeDefined();
  const key = configPath!.slice(String(mount.mountPath).length + 1);
  expect(Object.keys(files!), `ConfigMap ${configMap} has the key ${key}`).toContain(key);
  return { container: container!, config: loadCollectorConfig(files![key]!) };
}

/** The collector's `${env:NAME}` references resolved from the container's environment. */
function expandEnv(text: string, container: PodContainer): string {
  return text.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = container.env[name]?.value;
    expect(value, `${container.name} sets ${name}, which its collector config uses`).toBeDefined();
    return value!;
  });
}

/** The Service a `host:port` names (a short Service name) and the container port it reaches. */
function serviceTarget(
  host: string,
  port: number,
): { service: KubernetesObject; workload: KubernetesObject; containerPort: number } {
  const service = objectNamed(objects, 'Service', host);
  const spec = mapAt(service.raw.spec, `${host}: spec`);
  const servicePort = listAt(spec.ports, `${host}: ports`)
    .map((entry) => mapAt(entry, 'port'))
    .find((entry) => numberAt(entry.port, 'port') === port);
  expect(servicePort, `Service ${host} has port ${port}`).toBeDefined();
  const selector = mapAt(spec.selector, `${host}: selector`);
  const workload = workloads.find((candidate) =>
    selects(selector, mapAt(mapAt(podTemplateOf(candidate).metadata, 'metadata').labels, 'labels')),
  );
  expect(workload, `Service ${host} selects a Deployment's pods`).toBeDefined();
  const containerPort = containersOf(workload!)
    .map((container) => resolvePort(container, servicePort!.targetPort ?? port))
    .find((found) => found !== undefined);
  expect(containerPort, `Service ${host} port ${port} targets a container port`).toBeDefined();
  return { service, workload: workload!, containerPort: containerPort! };
}

function receiverPorts(config: CollectorConfig, protocol: 'grpc' | 'http'): number[] {
  return receiverListeners(config)
    .filter((listener) => listener.receiver === 'otlp' && listener.protocol === protocol)
    .map((listener) => listener.endpoint.port);
}

describe(`${KUSTOMIZE_DIR} (kustomize base)`, () => {
  describe('manifests', () => {
    it('lists every manifest of the directory, and every one parses into named objects', () => {
      const configs = Object.values(kustomization.configMaps).flatMap((files) =>
        Object.values(files),
      );
      const yamlFiles = listRepoFiles(KUSTOMIZE_DIR).filter((path) => /\.ya?ml$/.test(path));
      const manifests = yamlFiles.filter(
        (path) => !configs.includes(path) && !path.endsWith('/kustomization.yaml'),
      );
      expect(kustomization.resources.sort()).toEqual(manifests.sort());
      expect(objects.length).toBeGreaterThanOrEqual(kustomization.resources.length);
      for (const config of configs) expect(yamlFiles).toContain(config);
    });

    it('gives every object a unique kind and name, and leaves the namespace to kustomization.yaml', () => {
      const keys = objects.map((object) => `${object.kind}/${object.name}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(kustomization.namespace).toBe(
        objectNamed(objects, 'Namespace', kustomization.namespace!).name,
      );
      for (const object of objects) {
        expect(
          optionalMapAt(object.raw.metadata, 'metadata').namespace,
          `${object.kind}/${object.name}`,
        ).toBeUndefined();
      }
    });

    it('selects its own pods in every Deployment, Service, HPA and PodDisruptionBudget', () => {
      for (const workload of workloads) {
        const selector = mapAt(mapAt(workload.raw.spec, 'spec').selector, 'selector').matchLabels;
        const labels = mapAt(podTemplateOf(workload).metadata, 'metadata').labels;
        expect(
          selects(mapAt(selector, 'matchLabels'), mapAt(labels, 'labels')),
          workload.name,
        ).toBe(true);
      }
      for (const service of services) {
        const ports = listAt(mapAt(service.raw.spec, 'spec').ports, 'ports').map((entry) =>
          mapAt(entry, 'port'),
        );
        for (const port of ports) serviceTarget(service.name, numberAt(port.port, 'port'));
      }
      for (const hpa of objects.filter((object) => object.kind === 'HorizontalPodAutoscaler')) {
        const target = mapAt(mapAt(hpa.raw.spec, 'spec').scaleTargetRef, 'scaleTargetRef');
        objectNamed(objects, stringAt(target.kind, 'kind'), stringAt(target.name, 'name'));
      }
      for (const budget of objects.filter((object) => object.kind === 'PodDisruptionBudget')) {
        const selector = mapAt(
          mapAt(mapAt(budget.raw.spec, 'spec').selector, 'selector').matchLabels,
          'matchLabels',
        );
        expect(
          workloads.some((workload) =>
            selects(selector, mapAt(mapAt(podTemplateOf(workload).metadata, 'm').labels, 'l')),
          ),
        ).toBe(true);
      }
    });
  });

  describe('images', () => {
    const containers = workloads.flatMap(containersOf);

    it('names images without a tag: every pin is in kustomization.yaml', () => {
      for (const container of containers) {
        expect(container.image, container.name).not.toContain(':');
        expect(Object.keys(kustomization.images)).toContain(container.image);
        expect(kustomization.images[container.image]).toMatch(/^\d+\.\d+\.\d+$/);
      }
    });

    it('pins the collector release docker-compose.yml runs, and tooltrace at the package version', () => {
      const composeImage = serviceNamed(loadCompose(), 'otel-collector').image!;
      const [repository, tag] = composeImage.split(':');
      expect(kustomization.images[repository!]).toBe(tag);
      const version = mapAt(readRepoJson('package.json'), 'package.json').version;
      expect(kustomization.images.tooltrace).toBe(version);
    });
  });

  describe('the agent pod and its tooltrace sidecar', () => {
    const [listen] = flagValues(sidecar.args, '--listen');
    const endpoint = parseEndpoint(listen ?? '', 'sidecar --listen');

    it('runs the sidecar as a native sidecar container, started before the agent and stopped after it', () => {
      expect(sidecar.init).toBe(true);
      expect(sidecar.raw.restartPolicy).toBe('Always');
      expect(sidecar.args[0]).toBe('sidecar');
      expect(agentContainer.init).toBe(false);
    });

    it('listens on the port it declares, with the token from the Secret (required beyond loopback)', () => {
      expect(sidecar.ports.intake).toBe(endpoint.port);
      expect(endpoint.host).toBe('0.0.0.0');
      const secretRef = sidecar.env.TOOLTRACE_TOKEN?.secret;
      expect(secretRef, 'TOOLTRACE_TOKEN comes from a Secret').toBeDefined();
      const secret = objectNamed(objects, 'Secret', secretRef!.name);
      const keys = [
        ...Object.keys(optionalMapAt(secret.raw.stringData, 'stringData')),
        ...Object.keys(optionalMapAt(secret.raw.data, 'data')),
      ];
      expect(keys).toContain(secretRef!.key);
    });

    it('has the agent forward over loopback to that port, with the same token', () => {
      const script = [...agentContainer.command, ...agentContainer.args].join(' ');
      const forward = /--forward ([^\s;]+)/.exec(script)?.[1];
      const target = parseEndpoint(forward ?? '', 'agent --forward');
      expect(target.host).toBe('127.0.0.1');
      expect(target.port).toBe(endpoint.port);
      expect(agentContainer.env.TOOLTRACE_TOKEN).toEqual(sidecar.env.TOOLTRACE_TOKEN);
    });

    it('probes /healthz for liveness and start-up and /readyz for readiness, on the sidecar port', () => {
      const probe = (name: string): YamlMap =>
        mapAt(mapAt(sidecar.raw[name], name).httpGet, `${name}.httpGet`);
      for (const [name, path] of [
        ['livenessProbe', '/healthz'],
        ['startupProbe', '/healthz'],
        ['readinessProbe', '/readyz'],
      ] as const) {
        expect(probe(name).path, name).toBe(path);
        expect(resolvePort(sidecar, probe(name).port), name).toBe(endpoint.port);
      }
    });

    it("exports OTLP/HTTP protobuf to the collector agent tier's Service, on a port its config receives HTTP on", () => {
      expect(sidecar.env.OTEL_EXPORTER_OTLP_PROTOCOL?.value).toBe('http/protobuf');
      const otlp = parseEndpoint(
        sidecar.env.OTEL_EXPORTER_OTLP_ENDPOINT?.value ?? '',
        'OTEL_EXPORTER_OTLP_ENDPOINT',
      );
      expect(otlp.path).toBe('/');
      const target = serviceTarget(otlp.host, otlp.port);
      expect(receiverPorts(collectorOf(target.workload).config, 'http')).toContain(
        target.containerPort,
      );
      expect(sidecar.env.OTEL_SERVICE_NAME?.value).toMatch(/\S/);
    });

    it('sizes the sidecar from the bench: requests, a memory limit and a V8 heap below it', () => {
      const resources = mapAt(sidecar.raw.resources, 'resources');
      const requests = mapAt(resources.requests, 'requests');
      const limits = mapAt(resources.limits, 'limits');
      expect(requests.cpu).toMatch(/^\d+m$/);
      const limit = mebibytes(limits.memory, 'limits.memory');
      expect(mebibytes(requests.memory, 'requests.memory')).toBeLessThanOrEqual(limit);
      const heap = /--max-old-space-size=(\d+)/.exec(sidecar.env.NODE_OPTIONS?.value ?? '');
      expect(heap, 'NODE_OPTIONS caps the V8 heap').not.toBeNull();
      expect(Number(heap![1])).toBeLessThan(limit);
      expect(flagValues(sidecar.args, '--max-queue-spans')).toHaveLength(1);
    });

    it('runs both containers unprivileged, as the image user, on a read-only root file system', () => {
      const pod = mapAt(
        mapAt(podTemplateOf(agent).spec, 'spec').securityContext,
        'securityContext',
      );
      expect(pod.runAsNonRoot).toBe(true);
      expect(pod.runAsUser).toBe(1000);
      for (const container of [sidecar, agentContainer]) {
        const context = mapAt(container.raw.securityContext, `${container.name} securityContext`);
        expect(context.allowPrivilegeEscalation).toBe(false);
        expect(context.readOnlyRootFilesystem).toBe(true);
      }
    });
  });

  describe('collector agent and gateway tiers', () => {
    const agentTier = collectorOf(objectNamed(objects, 'Deployment', 'otel-agent'));
    const gatewayTier = collectorOf(objectNamed(objects, 'Deployment', 'otel-gateway'));
    const balancerId = Object.keys(agentTier.config.exporters).find(
      (id) => componentType(id) === 'load_balancing',
    );
    const balancer = mapAt(agentTier.config.exporters[balancerId ?? ''], 'load_balancing exporter');

    it.each([
      ['otel-agent', agentTier],
      ['otel-gateway', gatewayTier],
    ])(
      '%s: its config defines and uses every component, and memory_limiter fits its container',
      (_name, tier) => {
        expect(undefinedComponents(tier.config)).toEqual([]);
        expect(unusedComponents(tier.config)).toEqual([]);
        const limiter = mapAt(tier.config.processors.memory_limiter, 'memory_limiter');
        const limit = mebibytes(
          mapAt(mapAt(tier.container.raw.resources, 'resources').limits, 'limits').memory,
          'memory',
        );
        expect(numberAt(limiter.limit_mib, 'limit_mib')).toBeLessThan(limit);
        expect(tier.config.pipelines.traces?.processors[0]).toBe('memory_limiter');
        expect(tier.config.pipelines.traces?.processors.at(-1)).toBe('batch');
      },
    );

    it.each([
      ['otel-agent', agentTier],
      ['otel-gateway', gatewayTier],
    ])(
      '%s: declares the ports its receivers and health check listen on, and probes the health check',
      (_name, tier) => {
        const declared = Object.values(tier.container.ports);
        for (const listener of receiverListeners(tier.config)) {
          expect(listener.endpoint.host).toBe('0.0.0.0');
          expect(declared).toContain(listener.endpoint.port);
        }
        const health = parseEndpoint(
          stringAt(mapAt(tier.config.extensions.health_check, 'health_check').endpoint, 'endpoint'),
          'health_check',
        );
        for (const probe of ['readinessProbe', 'livenessProbe']) {
          const httpGet = mapAt(mapAt(tier.container.raw[probe], probe).httpGet, 'httpGet');
          expect(resolvePort(tier.container, httpGet.port), probe).toBe(health.port);
        }
      },
    );

    it('masks credentials in the agent tier with the statements of the local collector', () => {
      const local = loadCollectorConfig('otel-collector-config.yaml');
      expect(agentTier.config.processors[MASKING_PROCESSOR]).toEqual(
        local.processors[MASKING_PROCESSOR],
      );
      expect(agentTier.config.pipelines.traces?.processors.slice(0, 2)).toEqual([
        'memory_limiter',
        MASKING_PROCESSOR,
      ]);
    });

    it('routes by trace id to the headless gateway Service, on the port the gateways receive OTLP/gRPC on', () => {
      expect(balancerId).toBeDefined();
      expect(agentTier.config.pipelines.traces?.exporters).toEqual([balancerId]);
      expect(balancer.routing_key).toBe('traceID');
      const dns = mapAt(mapAt(balancer.resolver, 'resolver').dns, 'resolver.dns');
      // A string: the load_balancing exporter's dns resolver refuses a number (the real
      // Collector's `validate` says so; test-stack/validate.test.ts runs it).
      const port = Number(stringAt(dns.port, 'resolver.dns.port'));
      const target = serviceTarget(stringAt(dns.hostname, 'hostname'), port);
      expect(
        mapAt(target.service.raw.spec, 'spec').clusterIP,
        'a headless Service: one record per pod',
      ).toBe('None');
      expect(target.workload.name).toBe('otel-gateway');
      expect(receiverPorts(gatewayTier.config, 'grpc')).toContain(target.containerPort);
    });

    it('keeps every error and every cancelled call in the gateway, and samples the rest', () => {
      const tailSampling = mapAt(gatewayTier.config.processors.tail_sampling, 'tail_sampling');
      const policies = listAt(tailSampling.policies, 'policies').map((entry) =>
        mapAt(entry, 'policy'),
      );
      const ofType = (type: string): YamlMap[] => policies.filter((policy) => policy.type === type);
      expect(
        ofType('status_code').map(
          (policy) => mapAt(policy.status_code, 'status_code').status_codes,
        ),
      ).toContainEqual(['ERROR']);
      const booleans = ofType('boolean_attribute').map((policy) =>
        mapAt(policy.boolean_attribute, 'boolean_attribute'),
      );
      expect(booleans).toContainEqual({ key: 'tooltrace.tool.cancelled', value: true });
      const [probabilistic] = ofType('probabilistic');
      const percentage = numberAt(
        mapAt(probabilistic!.probabilistic, 'probabilistic').sampling_percentage,
        'sampling_percentage',
      );
      expect(percentage).toBeGreaterThan(0);
      expect(percentage).toBeLessThan(100);
      for (const policy of policies) expect(JSON.stringify(policy)).not.toContain('invert_match');
      expect(gatewayTier.config.pipelines.traces?.processors).toEqual([
        'memory_limiter',
        'tail_sampling',
        'batch',
      ]);
    });

    it('exports from the gateway to Tempo distributors and Jaeger, addresses set in its environment', () => {
      const hosts = Object.entries(gatewayTier.config.exporters).map(([id, value]) => {
        expect(componentType(id)).toBe('otlp_grpc');
        const endpoint = stringAt(mapAt(value, id).endpoint, `${id}.endpoint`);
        return parseEndpoint(expandEnv(endpoint, gatewayTier.container), id).host;
      });
      expect(hosts.some((host) => host.startsWith('tempo-distributor.'))).toBe(true);
      expect(hosts.some((host) => host === 'jaeger.jaeger.svc.cluster.local')).toBe(true);
    });

    it('lets the agent tier, which holds no state, scale out with an HPA', () => {
      const hpa = objects.find((object) => object.kind === 'HorizontalPodAutoscaler');
      const spec = mapAt(hpa?.raw.spec, 'spec');
      expect(mapAt(spec.scaleTargetRef, 'scaleTargetRef').name).toBe('otel-agent');
      expect(numberAt(spec.maxReplicas, 'maxReplicas')).toBeGreaterThan(
        numberAt(spec.minReplicas, 'minReplicas'),
      );
      expect(isYamlMap(agentTier.config.processors.tail_sampling)).toBe(false);
    });
  });
});
