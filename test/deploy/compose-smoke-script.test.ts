import { describe, expect, it } from 'vitest';
import { loadCompose, serviceNamed } from './compose-file.js';
import { parseEndpoint } from './endpoint.js';
import { loadDashboard } from './grafana-dashboard.js';
import { promqlNames } from './promql-names.js';
import { mapAt, listAt } from './yaml-shape.js';
import { readRepoJson, readRepoText, readRepoYaml, repoFileExists } from './repo-files.js';

const SCRIPT = 'scripts/compose-smoke.sh';
const WORKFLOW = '.github/workflows/compose-smoke.yml';
const DATASOURCES_FILE = 'deploy/grafana/provisioning/datasources/datasources.yaml';
const DASHBOARD_FILE = 'deploy/grafana/dashboards/tool-calls.json';

const script = readRepoText(SCRIPT);
const compose = loadCompose();

/** The `${NAME:-default}` default the script gives a variable. */
function scriptDefault(name: string): string {
  const match = new RegExp(`\\$\\{${name}:-([^}]+)\\}`).exec(script);
  expect(match, `${SCRIPT} gives ${name} a default`).not.toBeNull();
  return match![1]!;
}

describe(SCRIPT, () => {
  it('starts every service but the demo, then runs the demo once', () => {
    const up = /compose\[@\]\}" up --detach --wait [^\n]*?((?:\s[a-z-]+)+)\s*$/m.exec(script);
    expect(up, 'an `up --detach --wait SERVICES` line').not.toBeNull();
    const started = up![1]!
      .trim()
      .split(/\s+/)
      .filter((word) => !/^\d+$/.test(word));
    expect([...started, 'demo-agent'].sort()).toEqual(Object.keys(compose.services).sort());
    expect(script).toMatch(/compose\[@\]\}" run --rm demo-agent\n/);
    expect(serviceNamed(compose, 'demo-agent').raw.restart).toBe('no');
  });

  it('tears the stack down however it ends, and fails on the first failing step', () => {
    expect(script).toMatch(/^set -euo pipefail$/m);
    expect(script).toMatch(/^trap teardown EXIT$/m);
    expect(script).toMatch(/down --volumes --remove-orphans/);
    expect(script).toMatch(/exit "\$status"/);
  });

  it("asks Jaeger on the port compose publishes, and Tempo through Grafana's provisioned data source", () => {
    const jaeger = parseEndpoint(scriptDefault('JAEGER_URL'), 'JAEGER_URL');
    const jaegerPorts = serviceNamed(compose, 'jaeger').ports;
    expect(jaeger.host).toBe('127.0.0.1');
    expect(jaegerPorts.map((port) => Number(port.published))).toContain(jaeger.port);

    const tempo = parseEndpoint(scriptDefault('TEMPO_URL'), 'TEMPO_URL');
    const grafanaPorts = serviceNamed(compose, 'grafana').ports;
    expect(grafanaPorts.map((port) => Number(port.published))).toContain(tempo.port);
    const uid = /^\/api\/datasources\/proxy\/uid\/([^/]+)$/.exec(tempo.path)?.[1];
    const datasources = listAt(
      mapAt(readRepoYaml(DATASOURCES_FILE), DATASOURCES_FILE).datasources,
      'datasources',
    );
    const source = datasources
      .map((entry) => mapAt(entry, 'datasource'))
      .find((entry) => entry.uid === uid);
    expect(source, `a provisioned data source with uid ${uid}`).toBeDefined();
    expect(source!.type).toBe('tempo');
    expect(source!.access).toBe('proxy');
  });

  it("asks Prometheus, through Grafana's provisioned data source, for a series the dashboard reads", () => {
    const prometheus = parseEndpoint(scriptDefault('PROMETHEUS_URL'), 'PROMETHEUS_URL');
    const grafanaPorts = serviceNamed(compose, 'grafana').ports;
    expect(prometheus.host).toBe('127.0.0.1');
    expect(grafanaPorts.map((port) => Number(port.published))).toContain(prometheus.port);
    const uid = /^\/api\/datasources\/proxy\/uid\/([^/]+)$/.exec(prometheus.path)?.[1];
    const source = listAt(
      mapAt(readRepoYaml(DATASOURCES_FILE), DATASOURCES_FILE).datasources,
      'datasources',
    )
      .map((entry) => mapAt(entry, 'datasource'))
      .find((entry) => entry.uid === uid);
    expect(source, `a provisioned data source with uid ${uid}`).toBeDefined();
    expect(source!.type).toBe('prometheus');

    const query = /^metrics_query='([^']+)'$/m.exec(script)?.[1];
    expect(query, 'a metrics_query').toBeDefined();
    const metrics = promqlNames(query!).selectors.map((selector) => selector.metric);
    expect(metrics.length).toBeGreaterThan(0);
    const dashboardMetrics = loadDashboard(DASHBOARD_FILE).panels.flatMap((panel) =>
      panel.targets.flatMap((target) =>
        promqlNames(target.expr).selectors.map((selector) => selector.metric),
      ),
    );
    // dashboard.test.ts checks those are metrics tooltrace emits.
    for (const metric of metrics) expect(dashboardMetrics).toContain(metric);
    expect(script).toMatch(/--data-urlencode "query=\$\{metrics_query\}"/);
  });

  it('runs the checker that the test suite exercises', () => {
    const checker = /node --import tsx (\S+)/.exec(script)?.[1];
    expect(checker).toBe('scripts/compose-smoke/check-trace.ts');
    expect(repoFileExists(checker!)).toBe(true);
  });
});

describe(WORKFLOW, () => {
  const workflow = mapAt(readRepoYaml(WORKFLOW), WORKFLOW);
  const jobs = mapAt(workflow.jobs, 'jobs');
  const steps = Object.values(jobs).flatMap((job) => listAt(mapAt(job, 'job').steps, 'steps'));
  const runs = steps
    .map((step) => mapAt(step, 'step').run)
    .filter((run) => typeof run === 'string');

  it('renders the Kubernetes base with kustomize', () => {
    expect(runs.some((run) => /^kubectl kustomize deploy\/kubernetes\b/.test(String(run)))).toBe(
      true,
    );
  });

  it('runs on every push', () => {
    const triggers = mapAt(workflow.on, 'on');
    expect(Object.keys(triggers)).toContain('push');
    expect(triggers.push).toBeNull();
  });

  it("installs the lockfile's dependencies on the image's Node line, then runs the smoke script", () => {
    const setupNode = steps
      .map((step) => mapAt(step, 'step'))
      .find((step) => String(step.uses).startsWith('actions/setup-node@'));
    const image = /^ARG NODE_IMAGE=node:(\d+)\./m.exec(readRepoText('Dockerfile'));
    expect(image, 'the Dockerfile pins its Node image').not.toBeNull();
    expect(String(mapAt(setupNode!.with, 'with')['node-version'])).toBe(image![1]);
    expect(runs).toContain('npm ci --no-audit --no-fund');
    const scripts = mapAt(mapAt(readRepoJson('package.json'), 'package.json').scripts, 'scripts');
    expect(runs).toContain('npm run smoke:compose');
    expect(scripts['smoke:compose']).toBe(`bash ${SCRIPT}`);
  });
});
