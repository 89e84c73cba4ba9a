import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { hostileMix } from './hostile-lines.js';
import { parsePrometheusText } from './prometheus-text.js';
import { distinctCallIds } from './received-spans.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

/** `reason=count` pairs of the final status line. */
function rejectedInStatus(stderr: string): Record<string, number> {
  const lines = stderr.trim().split('\n');
  const match = /rejected \(([^)]*)\)/.exec(lines[lines.length - 1]!);
  if (match === null) throw new Error(`no rejection counts in:\n${stderr}`);
  return Object.fromEntries(
    match[1]!.split(' ').map((pair) => {
      const [reason, count] = pair.split('=');
      return [reason!, Number(count)];
    }),
  );
}

describe('tooltrace sidecar with hostile input', () => {
  const testbed = useReceiver();

  it(
    'counts 10,000 hostile lines by reason and exports every valid call',
    { timeout: 120_000 },
    async () => {
      const mix = hostileMix({ calls: 600, hostile: 10_000, hugeLines: 3, seed: 20260501 });
      const sidecar = startSidecar(['--stdin', '--status-interval', '0'], {
        input: mix.body,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
      });

      expect(await sidecar.exited).toEqual({ code: 0, signal: null });
      expect(rejectedInStatus(sidecar.stderr())).toEqual(mix.expected);
      expect(sidecar.stderr()).toMatch(/7200 events, 10003 rejected/);
      expect(distinctCallIds(testbed.receiver.spans).size).toBe(600);
      expect(testbed.receiver.spans.every((span) => span.status.code === 1)).toBe(true);
      expect(testbed.receiver.spans.every((span) => span.events.length === 10)).toBe(true);
    },
  );

  it('answers a hostile gzip body with its counts and serves them on /metrics', async () => {
    const mix = hostileMix({ calls: 100, hostile: 2000, hugeLines: 1, seed: 7 });
    const sidecar = startSidecar(['--listen', '127.0.0.1:0', '--status-interval', '0'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    const url = await sidecar.listenUrl();

    const response = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
      body: gzipSync(mix.body),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ accepted: 1200, rejected: mix.expected });

    const metrics = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
    for (const [reason, count] of Object.entries(mix.expected)) {
      expect(metrics.value('tooltrace_events_rejected_total', { reason })).toBe(count);
    }
    expect(
      metrics.value('tooltrace_events_rejected_total', { reason: 'not_object' }),
    ).toBeGreaterThan(0);
    await testbed.receiver.waitForSpans(100, 20_000);
    expect(distinctCallIds(testbed.receiver.spans).size).toBe(100);
  });
});
