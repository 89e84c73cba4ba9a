import { parse } from 'yaml';
import { parseEndpoint, withEnvDefaults, type Endpoint } from './endpoint.js';
import { readRepoYaml } from './repo-files.js';
import {
  isYamlMap,
  mapAt,
  optionalMapAt,
  stringAt,
  stringListAt,
  type YamlMap,
} from './yaml-shape.js';

/** The kinds of component a collector pipeline names. */
export const PIPELINE_KINDS = ['receivers', 'processors', 'exporters'] as const;

/** One of {@link PIPELINE_KINDS}. */
export type PipelineKind = (typeof PIPELINE_KINDS)[number];

/** The components of one `service.pipelines` entry, in order. */
export interface CollectorPipeline {
  receivers: string[];
  processors: string[];
  exporters: string[];
}

/** An OpenTelemetry Collector configuration file, read for consistency checks. */
export interface CollectorConfig {
  /** Repository path of the file. */
  file: string;
  receivers: YamlMap;
  processors: YamlMap;
  exporters: YamlMap;
  extensions: YamlMap;
  connectors: YamlMap;
  /** Extension ids listed in `service.extensions`. */
  serviceExtensions: string[];
  /** `service.pipelines` by pipeline id (`traces`, `traces/x`, …). */
  pipelines: Record<string, CollectorPipeline>;
}

/** Where a receiver listens. */
export interface ReceiverListener {
  /** Receiver id, e.g. `otlp`. */
  receiver: string;
  /** Protocol key under `protocols` (`grpc`, `http`), or `undefined` for a single-endpoint receiver. */
  protocol: string | undefined;
  endpoint: Endpoint;
}

/** Where an exporter sends. */
export interface ExporterTarget {
  /** Exporter id, e.g. `otlp/jaeger`. */
  exporter: string;
  /** Exporter type, the id before any `/`: `otlp`, `otlphttp`, `loadbalancing`. */
  type: string;
  endpoint: Endpoint;
  /** `tls.insecure` of the exporter (or of its `protocol.otlp` block). */
  insecure: boolean;
}

/** Reads and shapes a collector configuration; throws naming the file and key when malformed. */
export function loadCollectorConfig(file: string): CollectorConfig {
  const root = mapAt(readRepoYaml(file), file);
  const service = mapAt(root.service, `${file}: service`);
  const pipelines: Record<string, CollectorPipeline> = {};
  for (const [id, value] of Object.entries(
    mapAt(service.pipelines, `${file}: service.pipelines`),
  )) {
    const pipeline = mapAt(value, `${file}: service.pipelines.${id}`);
    const list = (kind: PipelineKind): string[] =>
      pipeline[kind] === undefined
        ? []
        : stringListAt(pipeline[kind], `${file}: service.pipelines.${id}.${kind}`);
    pipelines[id] = {
      receivers: list('receivers'),
      processors: list('processors'),
      exporters: list('exporters'),
    };
  }
  return {
    file,
    receivers: optionalMapAt(root.receivers, `${file}: receivers`),
    processors: optionalMapAt(root.processors, `${file}: processors`),
    exporters: optionalMapAt(root.exporters, `${file}: exporters`),
    extensions: optionalMapAt(root.extensions, `${file}: extensions`),
    connectors: optionalMapAt(root.connectors, `${file}: connectors`),
    serviceExtensions:
      service.extensions === undefined
        ? []
        : stringListAt(service.extensions, `${file}: service.extensions`),
    pipelines,
  };
}

/** A component's type: its id up to the first `/` (`otlp/jaeger` → `otlp`). */
export function componentType(id: string): string {
  return id.split('/', 1)[0]!;
}

/**
 * Names used in `service` that the file does not define, one message each. Connectors count
 * as receivers and exporters, as the collector treats them.
 */
export function undefinedComponents(config: CollectorConfig): string[] {
  const problems: string[] = [];
  for (const [id, pipeline] of Object.entries(config.pipelines)) {
    for (const kind of PIPELINE_KINDS) {
      for (const name of pipeline[kind]) {
        const defined =
          name in config[kind] || (kind !== 'processors' && name in config.connectors);
        if (!defined) problems.push(`pipeline ${id} names ${kind} ${name}, which is not defined`);
      }
    }
  }
  for (const name of config.serviceExtensions) {
    if (!(name in config.extensions)) {
      problems.push(`service.extensions names ${name}, which is not defined`);
    }
  }
  return problems;
}

/** Components the file defines but no pipeline (or `service.extensions`) uses. */
export function unusedComponents(config: CollectorConfig): string[] {
  const used = new Set<string>(config.serviceExtensions);
  for (const pipeline of Object.values(config.pipelines)) {
    for (const kind of PIPELINE_KINDS) for (const name of pipeline[kind]) used.add(name);
  }
  const problems: string[] = [];
  for (const kind of [...PIPELINE_KINDS, 'extensions', 'connectors'] as const) {
    for (const name of Object.keys(config[kind])) {
      if (!used.has(name)) problems.push(`${kind} ${name} is defined but never used`);
    }
  }
  return problems;
}

/** Every address the file's receivers listen on. */
export function receiverListeners(config: CollectorConfig): ReceiverListener[] {
  const listeners: ReceiverListener[] = [];
  for (const [receiver, value] of Object.entries(config.receivers)) {
    const settings = optionalMapAt(value, `${config.file}: receivers.${receiver}`);
    if (isYamlMap(settings.protocols)) {
      for (const [protocol, protocolValue] of Object.entries(settings.protocols)) {
        const where = `${config.file}: receivers.${receiver}.protocols.${protocol}`;
        const endpoint = optionalMapAt(protocolValue, where).endpoint;
        listeners.push({
          receiver,
          protocol,
          endpoint: parseEndpoint(stringAt(endpoint, `${where}.endpoint`), where),
        });
      }
    } else if (settings.endpoint !== undefined) {
      const where = `${config.file}: receivers.${receiver}.endpoint`;
      listeners.push({
        receiver,
        protocol: undefined,
        endpoint: parseEndpoint(stringAt(settings.endpoint, where), where),
      });
    }
  }
  return listeners;
}

/**
 * Every address the file's exporters send to: `endpoint` of OTLP-style exporters, and each
 * static host of a load-balancing exporter.
 */
export function exporterTargets(config: CollectorConfig): ExporterTarget[] {
  const targets: ExporterTarget[] = [];
  for (const [exporter, value] of Object.entries(config.exporters)) {
    const where = `${config.file}: exporters.${exporter}`;
    const settings = optionalMapAt(value, where);
    const type = componentType(exporter);
    if (type === 'loadbalancing' || type === 'load_balancing') {
      const protocol = optionalMapAt(settings.protocol, `${where}.protocol`);
      const otlp = optionalMapAt(protocol.otlp, `${where}.protocol.otlp`);
      const resolver = mapAt(settings.resolver, `${where}.resolver`);
      if (resolver.static === undefined) continue;
      const written = mapAt(resolver.static, `${where}.resolver.static`).hostnames;
      // `${env:NAME:-[a:4317, b:4317]}`: the Collector reads the value (here the default) as YAML.
      const hostnames = stringListAt(
        typeof written === 'string' ? parse(withEnvDefaults(written)) : written,
        `${where}.resolver.static.hostnames`,
      );
      for (const hostname of hostnames) {
        targets.push({
          exporter,
          type,
          endpoint: parseEndpoint(hostname, `${where}.resolver.static.hostnames`),
          insecure: isInsecure(otlp),
        });
      }
    } else if (settings.endpoint !== undefined) {
      targets.push({
        exporter,
        type,
        endpoint: parseEndpoint(stringAt(settings.endpoint, `${where}.endpoint`), where),
        insecure: isInsecure(settings),
      });
    }
  }
  return targets;
}

function isInsecure(settings: YamlMap): boolean {
  return isYamlMap(settings.tls) && settings.tls.insecure === true;
}
