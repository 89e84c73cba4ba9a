import { describe, expect, it } from 'vitest';
import {
  componentType,
  exporterTargets,
  loadCollectorConfig,
  receiverListeners,
  undefinedComponents,
  unusedComponents,
} from './collector-config.js';
import { MASKING_PROCESSOR } from './masking-rules.js';
import { withEnvDefaults } from './endpoint.js';
import { mapAt } from './yaml-shape.js';

const LOCAL_COLLECTOR = 'otel-collector-config.yaml';
const GATEWAY_COLLECTOR = 'deploy/collector-gateway.yaml';
const BACKEND_COLLECTOR = 'deploy/collector-backend.yaml';
const COLLECTOR_FILES = [LOCAL_COLLECTOR, GATEWAY_COLLECTOR, BACKEND_COLLECTOR];

describe('collector configurations', () => {
  describe.each(COLLECTOR_FILES)('%s', (file) => {
    const config = loadCollectorConfig(file);

    it('defines every component its pipelines name', () => {
      expect(undefinedComponents(config)).toEqual([]);
    });

    it('uses every component it defines', () => {
      expect(unusedComponents(config)).toEqual([]);
    });

    it('has a traces pipeline', () => {
      expect(config.pipelines.traces?.receivers.length).toBeGreaterThan(0);
      expect(config.pipelines.traces?.exporters.length).toBeGreaterThan(0);
    });

    it('puts memory_limiter first and batch last in every pipeline', () => {
      for (const pipeline of Object.values(config.pipelines)) {
        expect(pipeline.processors[0]).toBe('memory_limiter');
        expect(pipeline.processors.at(-1)).toBe('batch');
      }
    });

    it('gives memory_limiter a check interval and a spike limit below its limit', () => {
      const limiter = mapAt(config.processors.memory_limiter, `${file}: memory_limiter`);
      expect(limiter.check_interval).toMatch(/^\d+(ms|s)$/);
      expect(limiter.limit_mib).toBeGreaterThan(0);
      expect(limiter.spike_limit_mib).toBeLessThan(limiter.limit_mib as number);
    });

    it('binds its receivers and health check on every interface, so other hosts reach them', () => {
      const listeners = receiverListeners(config);
      expect(listeners.length).toBeGreaterThan(0);
      for (const listener of listeners) expect(listener.endpoint.host).toBe('0.0.0.0');
      const healthCheck = mapAt(config.extensions.health_check, `${file}: health_check`);
      expect(withEnvDefaults(String(healthCheck.endpoint))).toBe('0.0.0.0:13133');
      expect(config.serviceExtensions).toContain('health_check');
    });

    it('sends OTLP over gRPC to host:port endpoints, over HTTP to http(s) base URLs', () => {
      const targets = exporterTargets(config);
      expect(targets.length).toBeGreaterThan(0);
      for (const target of targets) {
        expect(['otlp_grpc', 'otlp_http', 'load_balancing']).toContain(target.type);
        if (target.type === 'otlp_http') {
          expect(['http', 'https'], target.exporter).toContain(target.endpoint.scheme);
          // The base URL: the exporter appends /v1/traces, /v1/metrics, … itself.
          expect(target.endpoint.path, target.exporter).not.toMatch(/\/v1\/(traces|metrics|logs)$/);
        } else {
          expect(target.endpoint.scheme, target.exporter).toBeUndefined();
        }
      }
    });
  });

  describe(LOCAL_COLLECTOR, () => {
    const config = loadCollectorConfig(LOCAL_COLLECTOR);

    it('receives OTLP on gRPC 4317 and HTTP 4318', () => {
      const ports = receiverListeners(config).map((listener) => [
        listener.protocol,
        listener.endpoint.port,
      ]);
      expect(ports).toEqual(
        expect.arrayContaining([
          ['grpc', 4317],
          ['http', 4318],
        ]),
      );
    });

    it('limits memory, then masks credentials, then batches', () => {
      expect(config.pipelines.traces?.processors).toEqual([
        'memory_limiter',
        MASKING_PROCESSOR,
        'batch',
      ]);
    });

    it('exports traces to Jaeger and Tempo over OTLP/gRPC, metrics to Prometheus over OTLP/HTTP', () => {
      const targets = exporterTargets(config).map((target) => [
        target.exporter,
        target.endpoint.host,
      ]);
      expect(targets).toEqual([
        ['otlp_grpc/jaeger', 'jaeger'],
        ['otlp_grpc/tempo', 'tempo'],
        ['otlp_http/prometheus', 'prometheus'],
      ]);
      expect(config.pipelines.traces?.exporters).toEqual(['otlp_grpc/jaeger', 'otlp_grpc/tempo']);
      expect(config.pipelines.metrics?.exporters).toEqual(['otlp_http/prometheus']);
    });

    it('receives metrics on the same OTLP receiver, limits memory, then batches', () => {
      expect(config.pipelines.metrics?.receivers).toEqual(config.pipelines.traces?.receivers);
      expect(config.pipelines.metrics?.processors).toEqual(['memory_limiter', 'batch']);
    });
  });

  describe(`${GATEWAY_COLLECTOR} and ${BACKEND_COLLECTOR}`, () => {
    const gateway = loadCollectorConfig(GATEWAY_COLLECTOR);
    const backend = loadCollectorConfig(BACKEND_COLLECTOR);
    const loadBalancerId = Object.keys(gateway.exporters).find((id) =>
      ['loadbalancing', 'load_balancing'].includes(componentType(id)),
    );

    it('load-balances by trace id, so every span of a trace reaches the same backend', () => {
      expect(loadBalancerId).toBeDefined();
      const loadBalancer = mapAt(gateway.exporters[loadBalancerId!], 'load balancer');
      expect(loadBalancer.routing_key).toBe('traceID');
      expect(gateway.pipelines.traces?.exporters).toEqual([loadBalancerId]);
    });

    it('lists several backends, each on the port where the backend receives OTLP/gRPC', () => {
      const backends = exporterTargets(gateway).filter(
        (target) => target.exporter === loadBalancerId,
      );
      expect(backends.length).toBeGreaterThan(1);
      const grpcPorts = receiverListeners(backend)
        .filter((listener) => listener.receiver === 'otlp' && listener.protocol === 'grpc')
        .map((listener) => listener.endpoint.port);
      for (const target of backends) expect(grpcPorts).toContain(target.endpoint.port);
    });

    it('masks credentials at the first hop, before they cross the network', () => {
      expect(gateway.pipelines.traces?.processors.slice(0, 2)).toEqual([
        'memory_limiter',
        MASKING_PROCESSOR,
      ]);
    });

    it('keeps the gateway masking statements identical to the local collector', () => {
      const local = loadCollectorConfig(LOCAL_COLLECTOR);
      expect(gateway.processors[MASKING_PROCESSOR]).toEqual(local.processors[MASKING_PROCESSOR]);
    });

    it('sends the backends to Tempo distributors and Jaeger collectors', () => {
      const hosts = exporterTargets(backend).map((target) => target.endpoint.host);
      expect(hosts).toEqual(expect.arrayContaining(['tempo-distributor', 'jaeger']));
    });
  });
});
