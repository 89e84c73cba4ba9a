import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { journalText } from '../journal-lines.js';
import { parsePrometheusText } from '../prometheus-text.js';
import { distinctCallIds } from '../received-spans.js';
import { startSidecar, useReceiver } from '../sidecar-process.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };

describe('tooltrace sidecar --listen', () => {
  const testbed = useReceiver();

  const listen = (args: string[], env: Record<string, string> = {}) =>
    startSidecar(['--status-interval', '0', ...args], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url, ...env },
    });

  it('answers 401 without the bearer token and takes events with it', async () => {
    const sidecar = listen(['--listen', '127.0.0.1:0', '--token', 's3cret']);
    const url = await sidecar.listenUrl();
    const body = journalText({ calls: 2 });

    const missing = await fetch(`${url}/v1/events`, { method: 'POST', headers: NDJSON, body });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { ...NDJSON, authorization: 'Bearer guess' },
      body,
    });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { ...NDJSON, authorization: 'Bearer s3cret' },
      body,
    });
    expect(right.status).toBe(200);
    expect(await right.json()).toEqual({ accepted: 24, rejected: {} });
    await testbed.receiver.waitForSpans(2);
    // The first refusal is logged, the second (same address, same reason) only counted.
    expect(sidecar.stderr().match(/refused .*/g)).toEqual([
      'refused POST /v1/events from 127.0.0.1 (no valid token): 401 missing or wrong bearer token; further refusals like it are only counted (tooltrace_http_refused_total)',
    ]);
  });

  it('answers 413 for a body over --max-body-bytes, compressed or inflated', async () => {
    const sidecar = listen(['--listen', '127.0.0.1:0', '--max-body-bytes', '8192']);
    const url = await sidecar.listenUrl();

    const large = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: NDJSON,
      body: journalText({ calls: 4 }),
    });
    expect(large.status).toBe(413);
    const bomb = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { ...NDJSON, 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.alloc(1024 * 1024, 0x20)),
    });
    expect(bomb.status).toBe(413);
    const small = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { ...NDJSON, 'content-encoding': 'gzip' },
      body: gzipSync(journalText({ calls: 1 })),
    });
    expect(small.status).toBe(200);
  });

  it('answers 415 for a wrong content type or encoding, 405 and 404 for wrong routes', async () => {
    const sidecar = listen(['--listen', '127.0.0.1:0']);
    const url = await sidecar.listenUrl();
    const body = journalText({ calls: 1 });

    const text = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body,
    });
    expect(text.status).toBe(415);
    const brotli = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { ...NDJSON, 'content-encoding': 'br' },
      body,
    });
    expect(brotli.status).toBe(415);
    expect((await fetch(`${url}/v1/events`)).status).toBe(405);
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
    const corrupt = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { ...NDJSON, 'content-encoding': 'gzip' },
      body: randomBytes(64),
    });
    expect(corrupt.status).toBe(400);
    // One line per reason (status), each the first of its kind.
    expect(sidecar.stderr().match(/refused .*: \d+ [^;]*/g)).toEqual([
      "refused POST /v1/events from 127.0.0.1: 415 content type 'text/plain' is not accepted: send application/x-ndjson",
      'refused GET /v1/events from 127.0.0.1: 405 use POST to send events',
      'refused GET /nowhere from 127.0.0.1: 404 no route for GET /nowhere',
      'refused POST /v1/events from 127.0.0.1: 400 gzip: incorrect header check',
    ]);
  });

  it('serves /healthz, /readyz and Prometheus text on /metrics', async () => {
    const sidecar = listen(['--listen', '127.0.0.1:0']);
    const url = await sidecar.listenUrl();
    const posted = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: NDJSON,
      body: `${journalText({ calls: 3, leaveLastOpen: true })}not json\n[1]\n`,
    });
    expect(await posted.json()).toEqual({
      accepted: 35,
      rejected: { not_json: 1, not_object: 1 },
    });
    await testbed.receiver.waitForSpans(2);

    expect(await (await fetch(`${url}/healthz`)).text()).toBe('ok\n');
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    for (const probe of ['/healthz', '/readyz']) {
      const head = await fetch(`${url}${probe}`, { method: 'HEAD' });
      expect(head.status, `HEAD ${probe}`).toBe(200);
      expect(await head.text()).toBe('');
    }
    const response = await fetch(`${url}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const metrics = parsePrometheusText(await response.text());
    expect(metrics.value('tooltrace_events_received_total', { source: 'http' })).toBe(35);
    expect(metrics.value('tooltrace_events_rejected_total', { reason: 'not_json' })).toBe(1);
    expect(metrics.value('tooltrace_events_rejected_total', { reason: 'too_deep' })).toBe(0);
    expect(metrics.value('tooltrace_spans_exported_total')).toBe(2);
    expect(metrics.value('tooltrace_span_exports_failed_total')).toBe(0);
    expect(metrics.value('tooltrace_open_spans')).toBe(1);
    expect(metrics.value('tooltrace_export_queue_depth')).toBe(0);
    expect(metrics.types.tooltrace_export_duration_seconds).toBe('histogram');
    expect(metrics.value('tooltrace_export_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(metrics.value('tooltrace_export_duration_seconds_bucket', { le: '+Inf' })).toBe(
      metrics.value('tooltrace_export_duration_seconds_count'),
    );
  });

  it('refuses to listen beyond loopback without a token (exit 2)', async () => {
    const sidecar = listen(['--listen', '0.0.0.0:0']);

    expect(await sidecar.exited).toEqual({ code: 2, signal: null });
    expect(sidecar.stderr()).toMatch(/--token/);
    expect(sidecar.stderr()).toMatch(/TOOLTRACE_TOKEN/);
  });

  it('listens beyond loopback with TOOLTRACE_TOKEN set', async () => {
    const sidecar = listen(['--listen', '0.0.0.0:0'], { TOOLTRACE_TOKEN: 'from-env' });
    const port = new URL(await sidecar.listenUrl()).port;

    const response = await fetch(`http://127.0.0.1:${port}/v1/events`, {
      method: 'POST',
      headers: { ...NDJSON, authorization: 'Bearer from-env' },
      body: journalText({ calls: 1 }),
    });
    expect(response.status).toBe(200);
  });

  it('listens on several addresses at once', async () => {
    const sidecar = listen(['--listen', '127.0.0.1:0', '--listen', '[::1]:0']);
    const first = await sidecar.listenUrl(0);
    const second = await sidecar.listenUrl(1);
    expect(second).toMatch(/^http:\/\/\[::1\]:\d+$/);

    for (const [index, url] of [first, second].entries()) {
      const response = await fetch(`${url}/v1/events`, {
        method: 'POST',
        headers: NDJSON,
        body: journalText({ calls: 5, firstCall: index * 5 }),
      });
      expect(response.status).toBe(200);
    }
    await testbed.receiver.waitForSpans(10);
    expect(distinctCallIds(testbed.receiver.spans).size).toBe(10);
  });
});
