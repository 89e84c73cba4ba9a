import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as agentMetrics from '../../src/otel/agent-metrics.js';
import { loadCompose, serviceNamed } from './compose-file.js';
import { emittedInstruments } from './emitted-metrics.js';
import { loadDashboard, type DatasourceRef } from './grafana-dashboard.js';
import { prometheusLabel, prometheusSeries, TRANSLATION_STRATEGY } from './prometheus-names.js';
import { promqlNames, queryProblems } from './promql-names.js';
import { listRepoFiles, readRepoYaml } from './repo-files.js';
import { prometheusConfigFile } from './service-listeners.js';
import { listAt, mapAt, stringAt, stringListAt } from './yaml-shape.js';

const DASHBOARD_FILE = 'deploy/grafana/dashboards/tool-calls.json';
const DATASOURCES_FILE = 'deploy/grafana/provisioning/datasources/datasources.yaml';
const PROVIDERS_DIR = 'deploy/grafana/provisioning/dashboards';
const GRAFANA_PROVIDERS_PATH = '/etc/grafana/provisioning/dashboards';

const compose = loadCompose();
const grafana = serviceNamed(compose, 'grafana');
const prometheusFile = prometheusConfigFile(serviceNamed(compose, 'prometheus'));
const otlp = mapAt(mapAt(readRepoYaml(prometheusFile), prometheusFile).otlp, 'otlp');

/** Labels every series gets from its resource: `job`, `instance` and the promoted attributes. */
const resourceLabels = [
  'job',
  'instance',
  ...stringListAt(otlp.promote_resource_attributes, 'otlp.promote_resource_attributes').map(
    prometheusLabel,
  ),
];
const instruments = await emittedInstruments();
const series = instruments.flatMap((instrument) => prometheusSeries(instrument, resourceLabels));
const dashboard = loadDashboard(DASHBOARD_FILE);
const datasources = listAt(
  mapAt(readRepoYaml(DATASOURCES_FILE), DATASOURCES_FILE).datasources,
  `${DATASOURCES_FILE}: datasources`,
).map((entry, index) => mapAt(entry, `${DATASOURCES_FILE}: datasources[${index}]`));

/** The instruments a set of queries reads, by their OpenTelemetry names. */
function instrumentsRead(queries: readonly string[]): Set<string> {
  const read = new Set<string>();
  for (const query of queries) {
    for (const selector of promqlNames(query).selectors) {
      const entry = series.find((candidate) => candidate.name === selector.metric);
      if (entry !== undefined) read.add(entry.instrument);
    }
  }
  return read;
}

describe('the metrics tooltrace emits, as Prometheus stores them', () => {
  it('include every instrument src/otel/agent-metrics.ts names', () => {
    const constants = Object.entries(agentMetrics)
      .filter(([key]) => key.startsWith('METRIC_'))
      .map(([, value]) => value);
    expect(constants.length).toBeGreaterThan(0);
    expect(instruments.map((instrument) => instrument.name)).toEqual(
      expect.arrayContaining(constants),
    );
  });

  it("include the sidecar's health, refusals among them", () => {
    expect(
      instruments.filter((instrument) => instrument.name.startsWith('tooltrace.sidecar.')),
    ).toHaveLength(8);
    expect(series.map((entry) => entry.name)).toEqual(
      expect.arrayContaining([
        'tooltrace_sidecar_spans_dropped_total',
        'tooltrace_sidecar_spans_rejected_total',
      ]),
    );
  });

  it('are named by the translation strategy deploy/prometheus/prometheus.yml sets', () => {
    expect(otlp.translation_strategy).toBe(TRANSLATION_STRATEGY);
  });

  it('become series with unit and type suffixes and underscored labels', () => {
    const named = (name: string) => series.find((entry) => entry.name === name);
    expect(named('gen_ai_execute_tool_duration_seconds_bucket')?.labels).toEqual(
      expect.arrayContaining(['gen_ai_tool_name', 'error_type', 'le', 'service_name']),
    );
    expect(named('gen_ai_client_token_usage_count')?.labels).toContain('gen_ai_token_type');
    expect(named('tooltrace_tool_calls_in_flight')?.labels).toContain('gen_ai_tool_name');
    expect(named('tooltrace_sidecar_events_rejected_total')?.labels).toContain('reason');
    expect(named('tooltrace_sidecar_export_queue_depth')).toBeDefined();
    // No suffix for annotation units ({call}), no _total on an up-down counter.
    expect(named('tooltrace_tool_calls_in_flight_total')).toBeUndefined();
  });
});

describe(DASHBOARD_FILE, () => {
  const queries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));

  it('is the "Tool calls" dashboard, with panels that all query something', () => {
    expect(dashboard.title).toBe('Tool calls');
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.panels.length).toBeGreaterThan(0);
    for (const panel of dashboard.panels) {
      expect(panel.targets.length, `panel ${panel.title}`).toBeGreaterThan(0);
    }
  });

  it.each(dashboard.panels.map((panel) => [panel.title, panel] as const))(
    'panel "%s" queries only metrics tooltrace emits, by labels they carry',
    (_title, panel) => {
      for (const target of panel.targets) {
        expect(queryProblems(target.expr, series), `${target.refId}: ${target.expr}`).toEqual([]);
      }
    },
  );

  it('would be caught naming a metric tooltrace does not emit', () => {
    const [query] = queries.filter((expr) => expr.includes('_seconds_count'));
    expect(query).toBeDefined();
    // The name without its unit suffix: what Prometheus would store with suffixes turned off.
    const wrong = query!.replaceAll('_seconds_count', '_count');
    expect(queryProblems(wrong, series)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^names gen_ai_execute_tool_duration_count,/)]),
    );
  });

  it('shows calls, errors, durations, time to first partial, calls in flight and sidecar health', () => {
    expect([...instrumentsRead(queries)].sort()).toEqual(
      expect.arrayContaining([
        agentMetrics.METRIC_TOOL_DURATION,
        agentMetrics.METRIC_TIME_TO_FIRST_PARTIAL,
        agentMetrics.METRIC_CALLS_IN_FLIGHT,
        'tooltrace.sidecar.events.received',
        'tooltrace.sidecar.events.rejected',
        'tooltrace.sidecar.spans.exported',
        'tooltrace.sidecar.spans.dropped',
        'tooltrace.sidecar.spans.rejected',
        'tooltrace.sidecar.export.queue.depth',
      ]),
    );
    const durationQuantiles = queries.filter(
      (expr) =>
        expr.includes('histogram_quantile') &&
        expr.includes('gen_ai_execute_tool_duration_seconds_bucket'),
    );
    expect(durationQuantiles.map((expr) => /histogram_quantile\(([\d.]+)/.exec(expr)?.[1])).toEqual(
      ['0.5', '0.95'],
    );
  });

  it('reads every panel and query from a provisioned data source of the matching type, by uid', () => {
    for (const panel of dashboard.panels) {
      const references = new Map<string, DatasourceRef | undefined>([
        [`panel ${panel.title}`, panel.datasource],
      ]);
      for (const target of panel.targets) {
        references.set(`${panel.title} ${target.refId}`, target.datasource);
      }
      for (const [what, reference] of references) {
        expect(reference, `${what} names a data source`).toBeDefined();
        const source = datasources.find((candidate) => candidate.uid === reference!.uid);
        expect(source, `${what}: data source uid ${reference!.uid} is provisioned`).toBeDefined();
        expect(source!.type, what).toBe('prometheus');
        expect(reference!.type ?? source!.type, what).toBe(source!.type);
      }
    }
  });
});

describe('dashboard provisioning', () => {
  const providerFiles = listRepoFiles(PROVIDERS_DIR).filter((file) => /\.ya?ml$/.test(file));
  const providers = providerFiles.flatMap((file) =>
    listAt(mapAt(readRepoYaml(file), file).providers, `${file}: providers`).map((entry, index) =>
      mapAt(entry, `${file}: providers[${index}]`),
    ),
  );

  it(`mounts ${PROVIDERS_DIR} read-only where Grafana looks for dashboard providers`, () => {
    const mount = grafana.volumes.find((volume) => volume.target === GRAFANA_PROVIDERS_PATH);
    expect(mount?.source).toBe(`./${PROVIDERS_DIR}`);
    expect(mount?.readOnly).toBe(true);
    expect(providers.length).toBeGreaterThan(0);
  });

  it('has every file provider read a folder compose mounts from the repository, read-only', () => {
    for (const provider of providers) {
      expect(provider.type ?? 'file').toBe('file');
      const path = stringAt(mapAt(provider.options, 'provider options').path, 'options.path');
      const mount = grafana.volumes.find(
        (volume) => path === volume.target || path.startsWith(`${volume.target}/`),
      );
      expect(mount, `something is mounted at ${path}`).toBeDefined();
      expect(mount!.readOnly).toBe(true);
      expect(mount!.source.startsWith('./')).toBe(true);
    }
  });

  it(`serves ${DASHBOARD_FILE} from the mounted folder`, () => {
    const served = providers.flatMap((provider) => {
      const path = stringAt(mapAt(provider.options, 'provider options').path, 'options.path');
      const mount = grafana.volumes.find(
        (volume) => path === volume.target || path.startsWith(`${volume.target}/`),
      )!;
      const folder = posix.join(mount.source.slice(2), path.slice(mount.target.length));
      return listRepoFiles(folder).filter((file) => file.endsWith('.json'));
    });
    expect(served).toContain(DASHBOARD_FILE);
  });
});
