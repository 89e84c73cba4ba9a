import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ReceivedMetricPoint } from '../../../src/testing/index.js';
import { eventIdFor } from '../journal-lines.js';
import { startSidecar, useReceiver } from '../sidecar-process.js';

const BASE_MS = Date.UTC(2026, 4, 1, 12, 0, 0);

/** One envelope line at `ms` after the base time. */
function line(type: string, id: string, parent: string, ms: number, payload: unknown): string {
  return JSON.stringify({
    ts: new Date(BASE_MS + ms).toISOString(),
    type,
    event_id: eventIdFor(id),
    ...(parent === '' ? {} : { parent_id: eventIdFor(parent) }),
    session_id: 's1',
    agent_id: 'planner',
    payload,
  });
}

type Outcome = { error?: string; cancelled?: boolean };

function invoke(callId: string, name: string, ms: number): string {
  return line('tool.invoke', `invoke-${callId}`, '', ms, { id: callId, name, arguments: {} });
}

function result(callId: string, name: string, ms: number, outcome: Outcome = {}): string {
  const payload = { id: callId, name, output: 'done', ...outcome };
  return line('tool.result', `result-${callId}`, `invoke-${callId}`, ms, payload);
}

function points(all: readonly ReceivedMetricPoint[], name: string): ReceivedMetricPoint[] {
  return all.filter((point) => point.name === name);
}

describe('tooltrace sidecar metrics export', () => {
  const testbed = useReceiver();

  it('sends gen_ai.execute_tool.duration to /v1/metrics: every call once, by tool and error.type, in-flight snapshots not counted', async () => {
    const sidecar = startSidecar(['--stdin', '--live-interval', '20ms', '--status-interval', '0'], {
      keepStdinOpen: true,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      },
    });
    // Two slow calls stay open until each has had in-flight snapshots exported.
    sidecar.child.stdin!.write(
      `${invoke('tc_slow_0', 'slow', 0)}\n${invoke('tc_slow_1', 'slow', 1)}\n`,
    );
    await expect
      .poll(
        () => testbed.receiver.spans.filter((span) => span.attributes['tooltrace.inflight']).length,
        { timeout: 20_000 },
      )
      .toBeGreaterThanOrEqual(2);
    const lines: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      lines.push(
        invoke(`tc_search_${index}`, 'search', 10 + index),
        result(`tc_search_${index}`, 'search', 20 + index),
      );
    }
    for (let index = 0; index < 3; index += 1) {
      lines.push(
        invoke(`tc_fetch_${index}`, 'fetch', 30 + index),
        result(`tc_fetch_${index}`, 'fetch', 40 + index, { error: 'HTTP 503' }),
      );
    }
    lines.push(
      result('tc_slow_0', 'slow', 5000, { error: 'aborted', cancelled: true }),
      result('tc_slow_1', 'slow', 6000, { error: 'aborted', cancelled: true }),
    );
    sidecar.child.stdin!.end(`${lines.join('\n')}\n`);
    expect((await sidecar.exited).code).toBe(0);

    const received = testbed.receiver.metrics;
    const durations = points(received, 'gen_ai.execute_tool.duration');
    expect(durations.length).toBeGreaterThan(0);
    expect(new Set(durations.map((point) => point.unit))).toEqual(new Set(['s']));
    // One export at shutdown: cumulative points, each call in exactly one of them.
    const count = (tool: string, errorType?: string): number =>
      durations
        .filter(
          (point) =>
            point.attributes['gen_ai.tool.name'] === tool &&
            point.attributes['error.type'] === errorType,
        )
        .reduce((total, point) => total + (point.count ?? 0), 0);
    expect(durations.reduce((total, point) => total + (point.count ?? 0), 0)).toBe(11);
    expect(count('search')).toBe(6);
    expect(count('fetch', '_OTHER')).toBe(3);
    expect(count('slow', 'cancelled')).toBe(2);
    const slow = durations.find((point) => point.attributes['gen_ai.tool.name'] === 'slow');
    expect(slow?.value).toBeCloseTo(5 + 5.999, 6);
    expect(slow?.resource['service.name']).toBe('tooltrace-sidecar');

    // The sidecar's own health, beside them.
    expect(points(received, 'tooltrace.sidecar.spans.dropped')).toEqual([]);
    const rejected = points(received, 'tooltrace.sidecar.spans.rejected');
    expect(rejected.map((point) => point.value)).toEqual([0]);
    const accepted = points(received, 'tooltrace.sidecar.events.received');
    expect(accepted.reduce((total, point) => total + (point.value ?? 0), 0)).toBe(22);
    expect(sidecar.stderr()).toContain(`metrics to ${testbed.receiver.url}/v1/metrics (http/json)`);
  });

  it('sends no metrics with OTEL_METRICS_EXPORTER=none, and refuses an exporter it does not have', async () => {
    const input = `${invoke('tc_1', 'search', 0)}\n${result('tc_1', 'search', 5)}\n`;
    const quiet = startSidecar(['--stdin'], {
      input,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url, OTEL_METRICS_EXPORTER: 'none' },
    });
    expect((await quiet.exited).code).toBe(0);
    expect(testbed.receiver.requests.filter((request) => request.path === '/v1/metrics')).toEqual(
      [],
    );
    expect(testbed.receiver.spans).toHaveLength(1);

    const refused = startSidecar(['--stdin'], {
      input,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
        OTEL_METRICS_EXPORTER: 'prometheus',
      },
    });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toMatch(
      /OTEL_METRICS_EXPORTER: 'prometheus' is not an exporter the sidecar supports; accepted: otlp, console, none/,
    );
  });

  it('exports with the temporality OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE asks for, and refuses one it does not know', async () => {
    const input = `${invoke('tc_1', 'search', 0)}\n${result('tc_1', 'search', 5)}\n`;
    const durationsWith = async (preference: string | undefined) => {
      testbed.receiver.clear();
      const sidecar = startSidecar(['--stdin', '--status-interval', '0'], {
        input,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
          ...(preference === undefined
            ? {}
            : { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: preference }),
        },
      });
      expect((await sidecar.exited).code).toBe(0);
      return points(testbed.receiver.metrics, 'gen_ai.execute_tool.duration');
    };
    const cumulative = await durationsWith(undefined);
    expect(cumulative.map((point) => point.temporality)).toEqual(['cumulative']);
    const delta = await durationsWith('Delta');
    expect(delta.map((point) => [point.temporality, point.count])).toEqual([['delta', 1]]);

    const refused = startSidecar(['--stdin'], {
      input,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
        OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'sometimes',
      },
    });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toContain(
      "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE 'sometimes' is not supported: use cumulative, delta or lowmemory",
    );
  });

  it('says when metrics cannot be delivered, and exits at the shutdown timeout however long the endpoint stalls', async () => {
    // Accepts metric requests and never answers, like a collector that hangs: the exporter
    // itself would wait a minute (OTEL_METRIC_EXPORT_TIMEOUT).
    const stalled: IncomingMessage[] = [];
    const server: Server = createServer((request) => void stalled.push(request));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const metricsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`;
    try {
      const sidecar = startSidecar(
        ['--stdin', '--status-interval', '0', '--shutdown-timeout', '1s'],
        {
          input: `${invoke('tc_1', 'search', 0)}\n${result('tc_1', 'search', 5)}\n`,
          env: {
            OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
            OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: metricsUrl,
            OTEL_METRIC_EXPORT_INTERVAL: '60000',
            OTEL_METRIC_EXPORT_TIMEOUT: '60000',
            OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '60000',
          },
        },
      );
      // Well inside the test's 30 s; before the fix it lived until the exporter gave up.
      expect((await sidecar.exited).code).toBe(0);
      expect(stalled.length).toBeGreaterThan(0);
      expect(testbed.receiver.spans).toHaveLength(1);
      expect(sidecar.stderr()).toContain(
        `the final metrics were not delivered to ${metricsUrl} (no answer within the shutdown timeout)`,
      );
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('says the final metrics had no time left when undeliverable spans used up the shutdown timeout', async () => {
    // A port nothing listens on: spans are retried until the deadline, which leaves the final
    // metrics no time; that is no endpoint keeping silent.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const sidecar = startSidecar(
      ['--stdin', '--status-interval', '0', '--shutdown-timeout', '1s'],
      {
        input: `${invoke('tc_1', 'search', 0)}\n${result('tc_1', 'search', 5)}\n`,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: deadUrl, OTEL_METRIC_EXPORT_INTERVAL: '60000' },
      },
    );
    expect((await sidecar.exited).code).toBe(4);
    expect(sidecar.stderr()).toContain(
      `the final metrics were not delivered to ${deadUrl}/v1/metrics (the shutdown timeout ran out while spans were being delivered, before they could be sent)`,
    );
    expect(sidecar.stderr()).not.toContain('no answer within the shutdown timeout');
  });

  it('reports a failing metrics endpoint once, with its error, and again when it works', async () => {
    // Refuses the first two metric exports (400: not retried), then takes them.
    let requests = 0;
    const server: Server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        requests += 1;
        response.writeHead(requests <= 2 ? 400 : 200, { 'content-type': 'application/x-protobuf' });
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const metricsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`;
    try {
      const sidecar = startSidecar(['--stdin', '--status-interval', '0'], {
        keepStdinOpen: true,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: metricsUrl,
          OTEL_METRIC_EXPORT_INTERVAL: '50',
        },
      });
      sidecar.child.stdin!.write(
        `${invoke('tc_1', 'search', 0)}\n${result('tc_1', 'search', 5)}\n`,
      );
      await sidecar.waitForStderr(/metrics export to .* works again/);
      sidecar.child.stdin!.end();
      expect((await sidecar.exited).code).toBe(0);
      const lines = sidecar.stderr().split('\n');
      expect(lines.filter((line) => line.includes('metrics export'))).toEqual([
        expect.stringMatching(
          new RegExp(
            `^tooltrace sidecar: metrics export to ${metricsUrl} failed \\(.+\\); trying again at the next interval$`,
          ),
        ),
        `tooltrace sidecar: metrics export to ${metricsUrl} works again`,
      ]);
      expect(lines.some((line) => line.includes('final metrics'))).toBe(false);
      expect(requests).toBeGreaterThan(2);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('names the final metrics an endpoint refused at shutdown, without promising another try', async () => {
    const sidecar = startSidecar(['--stdin', '--status-interval', '0'], {
      input: `${invoke('tc_1', 'search', 0)}\n${result('tc_1', 'search', 5)}\n`,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
        // The receiver answers every path but its own with 404, which OTLP exporters do not retry.
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${testbed.receiver.url}/not-metrics`,
      },
    });
    expect((await sidecar.exited).code).toBe(0);
    const stderr = sidecar.stderr();
    expect(stderr).toContain(
      `the final metrics were not delivered to ${testbed.receiver.url}/not-metrics (404 Not Found from ${testbed.receiver.url}/not-metrics — is the endpoint path right?: no OTLP endpoint at /not-metrics)`,
    );
    expect(stderr).not.toContain('trying again at the next interval');
    expect(testbed.receiver.spans).toHaveLength(1);
  });

  it('names a dead metrics endpoint and why, and does not wait for it', async () => {
    // Nothing to export but the metrics, to a port nothing listens on: the final export fails
    // at once (a refused connection is not retried within an export), and says where and why.
    const deadUrl = 'http://127.0.0.1:9';
    const sidecar = startSidecar(['--stdin', '--status-interval', '0'], {
      input: '',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: deadUrl },
    });
    expect((await sidecar.exited).code).toBe(0);
    expect(sidecar.stderr()).toContain(
      `the final metrics were not delivered to ${deadUrl}/v1/metrics (${deadUrl}/v1/metrics: connect ECONNREFUSED 127.0.0.1:9)`,
    );
    expect(sidecar.stderr()).not.toContain('retrying until the shutdown deadline');
  });
});
