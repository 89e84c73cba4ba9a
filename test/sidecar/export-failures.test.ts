import { describe, expect, it } from 'vitest';
import { journalText } from './journal-lines.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

describe('tooltrace sidecar export failures', () => {
  const testbed = useReceiver();

  const run = (input: string, args: string[] = []) =>
    startSidecar(['--stdin', '--no-live-updates', ...args], {
      input,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url, OTEL_METRICS_EXPORTER: 'none' },
    });

  it('exits 3 at once when the endpoint answers 404, naming the status and the URL', async () => {
    testbed.receiver.answerAlways({ status: 404, message: 'no such path' });
    const began = Date.now();

    const sidecar = run(journalText({ calls: 20 }));

    expect(await sidecar.exited).toEqual({ code: 3, signal: null });
    expect(Date.now() - began).toBeLessThan(15_000);
    expect(sidecar.stderr()).toContain(
      `404 Not Found from ${testbed.receiver.tracesUrl} — is the endpoint path right?: no such path`,
    );
    expect(sidecar.stderr()).toMatch(/20 spans were not delivered; exit code 3/);
    expect(testbed.receiver.requests.every((request) => request.status === 404)).toBe(true);
  });

  it('sends each batch once against 400 and shows the endpoint message', async () => {
    testbed.receiver.answerAlways({ status: 400, message: 'attribute value too long' });

    const sidecar = run(journalText({ calls: 600 }));

    expect(await sidecar.exited).toEqual({ code: 3, signal: null });
    // Each span went out in exactly one request: no batch was sent again or split.
    const requests = testbed.receiver.requests;
    expect(requests.every((request) => request.status === 400)).toBe(true);
    expect(requests.reduce((sum, request) => sum + request.refusedCount, 0)).toBe(600);
    expect(sidecar.stderr()).toContain('attribute value too long');
    expect(sidecar.stderr()).toMatch(
      /600 spans refused by the endpoint \(600 dropped \[400: 600\]/,
    );
  });

  it('reports spans a partial_success rejected, with count and message, and exits 3', async () => {
    testbed.receiver.answerAlways({
      partialSuccess: { rejectedSpans: 3, errorMessage: 'spans too old' },
    });

    const sidecar = run(journalText({ calls: 10 }));

    expect(await sidecar.exited).toEqual({ code: 3, signal: null });
    expect(sidecar.stderr()).toMatch(/accepted a batch but rejected 3 spans: spans too old/);
    expect(sidecar.stderr()).toMatch(/3 spans refused by the endpoint \(0 dropped, 3 rejected\)/);
  });

  it('waits for the HTTP date of a 503 Retry-After, then delivers everything', async () => {
    // HTTP dates have whole seconds: the date about 3 s ahead, as it is sent.
    const retryAt = Math.floor((Date.now() + 3000) / 1000) * 1000;
    testbed.receiver.answerNext({ status: 503, retryAfter: new Date(retryAt).toUTCString() });

    const sidecar = run(journalText({ calls: 30 }));
    await testbed.receiver.waitForRequests(2);

    expect(Date.now()).toBeGreaterThanOrEqual(retryAt);
    expect(testbed.receiver.requests[0]!.status).toBe(503);
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(new Set(testbed.receiver.spans.map((span) => span.spanId)).size).toBe(30);
  });

  /** A sidecar that has read 40 calls and exported none: the endpoint answers after 10 s. */
  async function stuckSidecar(shutdownTimeout: string) {
    testbed.receiver.answerAlways({ delayMs: 10_000 });
    const sidecar = startSidecar(
      [
        '--stdin',
        '--no-live-updates',
        '--shutdown-timeout',
        shutdownTimeout,
        '--status-interval',
        '50ms',
      ],
      {
        keepStdinOpen: true,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url, OTEL_METRICS_EXPORTER: 'none' },
      },
    );
    sidecar.child.stdin!.write(journalText({ calls: 40 }));
    await sidecar.waitForStderr(/480 events, 0 rejected, 0 calls open, 0 spans exported/);
    return sidecar;
  }

  it('exits 4 on SIGTERM with a slow endpoint and names how many spans were not delivered', async () => {
    const sidecar = await stuckSidecar('1s');

    sidecar.child.kill('SIGTERM');

    expect(await sidecar.exited).toEqual({ code: 4, signal: null });
    expect(sidecar.stderr()).toMatch(/shutdown timeout: 40 spans were not delivered/);
    expect(sidecar.stderr()).toMatch(/40 spans were not delivered; exit code 4/);
    // The summary is the last word: the requests shutdown cut are not reported as failures
    // to be retried after it.
    expect(sidecar.stderr().trimEnd().split('\n').at(-1)).toMatch(/exit code 4$/);
    expect(sidecar.stderr()).not.toMatch(/retrying, nothing is dropped/);
  });

  it('exits at once on a second SIGTERM, naming the spans it did not deliver', async () => {
    const sidecar = await stuckSidecar('60s');

    sidecar.child.kill('SIGTERM');
    await sidecar.waitForStderr(/received SIGTERM; ending open calls and flushing/);
    sidecar.child.kill('SIGTERM');

    // Well before the 60 s flush (and the 30 s test): the operator asked twice.
    expect(await sidecar.exited).toEqual({ code: 4, signal: null });
    expect(sidecar.stderr()).toMatch(
      /received SIGTERM again; exiting now: 40 spans were not delivered; exit code 4\n$/,
    );
  });
});
