import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalText } from './journal-lines.js';
import { parsePrometheusText, type PrometheusText } from './prometheus-text.js';
import { distinctCallIds, distinctSpanIds, divergentDuplicates } from './received-spans.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function scrape(url: string): Promise<PrometheusText> {
  const response = await fetch(`${url}/metrics`);
  return parsePrometheusText(await response.text());
}

async function until(what: string, condition: () => Promise<boolean> | boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function post(url: string, body: string): Promise<Response> {
  return fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson' },
    body,
  });
}

describe('tooltrace sidecar loses nothing', () => {
  const testbed = useReceiver({ directory: 'tooltrace-lost-' });

  // The minute-long outage, backoff and all, is ReliableSpanProcessor's test (fake timers); this
  // is the same through the real process: down until a round of exports failed, then up.
  it('delivers every call after the receiver was down', async () => {
    testbed.receiver.setAvailable(false);
    const calls = 2000;
    const sidecar = startSidecar(['--stdin', '--listen', '127.0.0.1:0', '--status-interval', '0'], {
      input: journalText({ calls }),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    const url = await sidecar.listenUrl();
    await until(
      'every line read and a failed round of exports',
      async () => {
        const metrics = await scrape(url);
        return (
          metrics.value('tooltrace_events_received_total') === calls * 12 &&
          metrics.value('tooltrace_span_exports_failed_total') >= 2
        );
      },
      30_000,
    );
    const during = await scrape(url);
    expect(during.value('tooltrace_export_queue_depth')).toBe(calls);
    expect(during.value('tooltrace_spans_exported_total')).toBe(0);
    expect(testbed.receiver.spans).toHaveLength(0);

    testbed.receiver.setAvailable(true);
    await until('every call', () => distinctSpanIds(testbed.receiver.spans).size === calls, 60_000);
    sidecar.child.kill('SIGTERM');
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(distinctCallIds(testbed.receiver.spans).size).toBe(calls);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
  });

  it('answers 429 with Retry-After while the queue is over its budget', async () => {
    testbed.receiver.setAvailable(false);
    const sidecar = startSidecar(
      ['--listen', '127.0.0.1:0', '--max-queue-spans', '50', '--status-interval', '0'],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url } },
    );
    const url = await sidecar.listenUrl();
    let accepted = 0;
    let refused: Response | undefined;
    for (let batch = 0; batch < 20 && refused === undefined; batch += 1) {
      const response = await post(url, journalText({ calls: 10, firstCall: batch * 10 }));
      if (response.status === 200) accepted += 10;
      else refused = response;
      await response.arrayBuffer();
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('retry-after')).toBe('1');
    expect(accepted).toBe(50);
    expect((await scrape(url)).value('tooltrace_export_queue_depth')).toBe(50);

    testbed.receiver.setAvailable(true);
    await until('the queue to drain', () => testbed.receiver.spans.length >= 50, 30_000);
    const retried = await post(url, journalText({ calls: 10, firstCall: 500 }));
    expect(retried.status).toBe(200);
    await until(
      'every accepted call',
      () => distinctCallIds(testbed.receiver.spans).size === 60,
      30_000,
    );
  });

  it('pauses reading a file while the queue is over its budget', { timeout: 60_000 }, async () => {
    const calls = 2000;
    const journal = join(testbed.directory, 'journal.jsonl');
    writeFileSync(journal, journalText({ calls }));
    testbed.receiver.setAvailable(false);
    const sidecar = startSidecar(
      ['--file', journal, '--listen', '127.0.0.1:0', '--max-queue-spans', '50'],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url } },
    );
    const url = await sidecar.listenUrl();
    await sidecar.waitForStderr(/retrying, nothing is dropped/);
    const read = async () =>
      (await scrape(url)).value('tooltrace_events_received_total', { source: 'file' });
    const failures = async () => (await scrape(url)).value('tooltrace_span_exports_failed_total');
    // Another failed export (after its backoff) and nothing more of the file was read.
    const failed = await failures();
    const paused = await read();
    await until('another failed export', async () => (await failures()) > failed, 20_000);
    expect(await read()).toBe(paused);
    expect(paused).toBeLessThan(calls * 12);

    testbed.receiver.setAvailable(true);
    await until('every call', () => distinctCallIds(testbed.receiver.spans).size === calls, 40_000);
    expect(await read()).toBe(calls * 12);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
  });
});
