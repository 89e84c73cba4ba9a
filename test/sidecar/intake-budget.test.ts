import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { forwardEvents } from '../../src/forward/index.js';
import { journalText } from './journal-lines.js';
import { parsePrometheusText } from './prometheus-text.js';
import { distinctCallIds, divergentDuplicates } from './received-spans.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

describe('tooltrace sidecar queue budget at intake', () => {
  const testbed = useReceiver();

  const listen = (budget: number) =>
    startSidecar(
      [
        '--listen',
        '127.0.0.1:0',
        '--max-queue-spans',
        String(budget),
        '--no-live-updates',
        '--status-interval',
        '0',
      ],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url, OTEL_METRICS_EXPORTER: 'none' } },
    );

  it('stops reading a body at the budget and answers 429 with what it left unread', async () => {
    testbed.receiver.setAvailable(false);
    const url = await listen(10).listenUrl();

    // 100 calls of 12 lines, one span each: the 10th result fills the queue.
    const response = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: journalText({ calls: 100 }),
    });

    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({ accepted: 120, rejected: {}, unread: 1080 });
    const metrics = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
    expect(metrics.value('tooltrace_export_queue_depth')).toBe(10);
  });

  it('lets forwardEvents send the unread rest again, so every call arrives once', async () => {
    testbed.receiver.setAvailable(false);
    const url = await listen(20).listenUrl();
    const bus = new EventBus();
    const forwarder = forwardEvents(bus, { url, batchSize: 600, initialBackoffMs: 50 });
    for (let index = 0; index < 60; index += 1) {
      const invoke = bus.emit('tool.invoke', { id: `tc_${index}`, name: 'search', arguments: {} });
      bus.emit(
        'tool.result',
        { id: `tc_${index}`, name: 'search', output: 'ok' },
        { causation: { parentId: invoke.id } },
      );
    }
    await expect.poll(() => forwarder.stats().retries, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(forwarder.stats().sent).toBe(40);

    testbed.receiver.setAvailable(true);
    expect(await forwarder.close(20_000)).toBe(true);

    await testbed.receiver.waitForSpans(60);
    expect(forwarder.stats()).toMatchObject({ sent: 120, dropped: 0, refused: 0, queued: 0 });
    expect(distinctCallIds(testbed.receiver.spans).size).toBe(60);
    expect(testbed.receiver.spans).toHaveLength(60);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
  });
});
