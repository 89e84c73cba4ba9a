import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  eventually,
  JaegerQuery,
  parentOf,
  PrometheusQuery,
  ROOT,
  startStack,
  tagOf,
  type Stack,
} from '../scripts/stack/stack.js';
import { killSidecars, startSidecar } from '../test/sidecar/sidecar-process.js';
import { allSpans, runTooltrace } from './stack-peers.js';

const binaries = inject('stackBinaries');
let stack: Stack;
let jaeger: JaegerQuery;
let prometheus: PrometheusQuery;

beforeAll(async () => {
  stack = await startStack(binaries);
  jaeger = new JaegerQuery(stack.jaeger.queryUrl);
  prometheus = new PrometheusQuery(stack.prometheus.url);
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(killSidecars);

/** One NDJSON envelope line (the wire format), stamped now. */
function line(
  type: string,
  payload: Record<string, unknown>,
  ids: { eventId?: string; parentId?: string; session?: string } = {},
): string {
  return `${JSON.stringify({
    ts: new Date().toISOString(),
    type,
    event_id: ids.eventId ?? randomBytes(16).toString('hex'),
    ...(ids.parentId === undefined ? {} : { parent_id: ids.parentId }),
    source: 'stack-test',
    session_id: ids.session ?? 's-live',
    agent_id: 'a1',
    depth: 0,
    payload,
  })}\n`;
}

describe('in-flight snapshots in Jaeger', () => {
  it('are found by tag while the call runs, and nest under the final span afterwards', async () => {
    const service = 'inflight';
    const sidecar = startSidecar(
      [
        '--stdin',
        '--otlp-endpoint',
        stack.collector.otlpHttpUrl,
        '--service-name',
        service,
        '--live-interval',
        '1s',
        '--status-interval',
        '0',
      ],
      { keepStdinOpen: true, env: { OTEL_METRICS_EXPORTER: 'none' } },
    );
    const invokeId = randomBytes(16).toString('hex');
    sidecar.child.stdin!.write(
      line(
        'tool.invoke',
        { id: 'tc_slow', name: 'slow_search', arguments: { query: 'everything' } },
        { eventId: invokeId },
      ),
    );

    const running = await eventually('an in-flight snapshot in Jaeger', async () => {
      const found = await jaeger.traces(service, { tags: { 'tooltrace.inflight': 'true' } });
      return found.length > 0 ? found : undefined;
    });
    const snapshots = allSpans(running);
    expect(snapshots.every((span) => tagOf(span, 'tooltrace.inflight') === true)).toBe(true);
    expect(tagOf(snapshots[0]!, 'gen_ai.tool.name')).toBe('slow_search');

    sidecar.child.stdin!.end(
      line(
        'tool.result',
        { id: 'tc_slow', name: 'slow_search', output: 'found it' },
        { parentId: invokeId },
      ),
    );
    expect((await sidecar.exited).code, sidecar.stderr()).toBe(0);

    const trace = await eventually('the final span beside its snapshots', async () => {
      const found = await jaeger.trace(snapshots[0]!.traceID);
      const final = found?.spans.find((span) => tagOf(span, 'tooltrace.inflight') !== true);
      return final === undefined ? undefined : found;
    });
    const final = trace.spans.find((span) => tagOf(span, 'tooltrace.inflight') !== true)!;
    expect(final.operationName).toBe('execute_tool slow_search');
    expect(tagOf(final, 'otel.status_code')).toBe('OK');
    const stored = trace.spans.filter((span) => tagOf(span, 'tooltrace.inflight') === true);
    expect(stored.length).toBeGreaterThan(0);
    for (const snapshot of stored) expect(parentOf(snapshot)).toBe(final.spanID);
  });
});

describe("the sidecar's metrics, through the Collector, in Prometheus", () => {
  const dashboard = JSON.parse(
    readFileSync(join(ROOT, 'deploy/grafana/dashboards/tool-calls.json'), 'utf8'),
  ) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const queries = dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
  );

  beforeAll(async () => {
    const sidecar = startSidecar(
      [
        '--listen',
        '127.0.0.1:0',
        '--otlp-endpoint',
        stack.collector.otlpHttpUrl,
        '--service-name',
        'demo-agent',
        '--status-interval',
        '0',
      ],
      // Every second, so the counters have several samples in Prometheus during the run.
      { env: { OTEL_METRIC_EXPORT_INTERVAL: '1000' } },
    );
    const url = await sidecar.listenUrl();
    // The demo at its own pace (a few seconds), so rates see the counters grow.
    const demo = await runTooltrace(['demo', '--no-color', '--forward', url]);
    expect(demo.code, demo.stderr).toBe(0);
    // An MCP tools/call on each side (as the MCP adapters mark them), and a line the sidecar
    // rejects, so the MCP panel and the rejected-events series have something to draw.
    const mcpCall = (id: string, side: 'server' | 'client'): string => {
      const invokeId = randomBytes(16).toString('hex');
      const marked = { 'mcp.method.name': 'tools/call', 'network.transport': 'pipe' };
      return (
        line(
          'tool.invoke',
          {
            id,
            name: 'lookup',
            arguments: {},
            ...(side === 'server' ? { attributes: marked } : {}),
          },
          { eventId: invokeId, session: 's-mcp' },
        ) +
        line(
          'tool.result',
          {
            id,
            name: 'lookup',
            output: 'ok',
            ...(side === 'client' ? { attributes: marked } : {}),
          },
          { parentId: invokeId, session: 's-mcp' },
        )
      );
    };
    for (let round = 0; round < 3; round += 1) {
      const response = await fetch(`${url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: `${mcpCall(`mcp_s${round}`, 'server')}${mcpCall(`mcp_c${round}`, 'client')}not json\n`,
      });
      expect(response.status, await response.text()).toBeLessThan(300);
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
    sidecar.child.kill('SIGTERM');
    expect((await sidecar.exited).code, sidecar.stderr()).toBe(0);
  }, 180_000);

  it('stores the tool-call metrics under the names the dashboard queries', async () => {
    const names = await eventually('the tool-call histogram in Prometheus', async () => {
      const found = await prometheus.names();
      return found.includes('gen_ai_execute_tool_duration_seconds_bucket') ? found : undefined;
    });
    expect(names).toEqual(
      expect.arrayContaining([
        'gen_ai_execute_tool_duration_seconds_bucket',
        'gen_ai_invoke_agent_duration_seconds_bucket',
        'mcp_client_operation_duration_seconds_bucket',
        'mcp_server_operation_duration_seconds_bucket',
        'tooltrace_sidecar_events_received_total',
      ]),
    );
  });

  it('answers every PromQL query of deploy/grafana/dashboards with data', async () => {
    expect(queries.length).toBeGreaterThan(10);
    const empty: string[] = [];
    for (const { panel, expr } of queries) {
      // Grafana's $__rate_interval, for a scrape interval of 10 s, is at least 40 s.
      const promql = expr.replaceAll('$__rate_interval', '2m');
      const samples = await prometheus.query(promql);
      if (samples.length === 0) empty.push(`${panel}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });
});
