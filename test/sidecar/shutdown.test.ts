import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { journalLines, journalText } from './journal-lines.js';
import { finalSpans } from './received-spans.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };

describe('tooltrace sidecar on SIGTERM and SIGINT', () => {
  const testbed = useReceiver({ directory: 'tooltrace-shutdown-' });
  let journal: string;
  let checkpoint: string;

  beforeEach(() => {
    journal = join(testbed.directory, 'journal.jsonl');
    checkpoint = join(testbed.directory, 'checkpoint.json');
  });

  const start = (extra: string[] = []) =>
    startSidecar(
      ['--listen', '127.0.0.1:0', '--file', journal, '--checkpoint', checkpoint, ...extra],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url } },
    );

  it('exports open calls as snapshots marked shutdown, flushes, saves the checkpoint and exits 0', async () => {
    const complete = journalText({ calls: 5 });
    writeFileSync(journal, complete + journalText({ calls: 1, firstCall: 5, leaveLastOpen: true }));
    const sidecar = start();
    const url = await sidecar.listenUrl();
    const posted = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: NDJSON,
      body: journalText({ calls: 3, firstCall: 10, leaveLastOpen: true }),
    });
    expect(posted.status).toBe(200);
    await testbed.receiver.waitForSpans(7);

    sidecar.child.kill('SIGTERM');
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });

    expect(sidecar.stderr()).toMatch(/received SIGTERM; ending open calls and flushing/);
    const ended = testbed.receiver.spans.filter(
      (span) => span.attributes['tooltrace.end_reason'] === 'shutdown',
    );
    expect(ended.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual([
      'tc_12',
      'tc_5',
    ]);
    // The cut calls keep their span ids for their real end (read again after a restart): each
    // went out as its last in-flight snapshot, a child of that id, not as its span.
    for (const span of ended) {
      expect(span.name).toBe('execute_tool search (in flight)');
      expect(span.attributes['tooltrace.inflight']).toBe(true);
    }
    expect(finalSpans(testbed.receiver.spans)).toHaveLength(7);
    // The open call is not over: the checkpoint stays at its invoke, to read it whole next time.
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { offset: number };
    expect(saved.offset).toBe(Buffer.byteLength(complete));
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('does the same on SIGINT', async () => {
    writeFileSync(journal, journalText({ calls: 2, leaveLastOpen: true }));
    const sidecar = start();
    await testbed.receiver.waitForSpans(1);

    sidecar.child.kill('SIGINT');
    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(sidecar.stderr()).toMatch(/received SIGINT/);
    expect(finalSpans(testbed.receiver.spans)).toHaveLength(1);
    expect(
      testbed.receiver.spans.filter(
        (span) => span.attributes['tooltrace.end_reason'] === 'shutdown',
      ),
    ).toHaveLength(1);
  });

  it('stops intake at once, gives up flushing after --shutdown-timeout and exits 4', async () => {
    const lines = journalLines({ calls: 20 });
    writeFileSync(journal, `${lines.join('\n')}\n`);
    testbed.receiver.setAvailable(false);
    const sidecar = start(['--shutdown-timeout', '2s']);
    const url = await sidecar.listenUrl();
    await sidecar.waitForStderr(/retrying, nothing is dropped/);

    sidecar.child.kill('SIGTERM');
    await sidecar.waitForStderr(/ending open calls and flushing/);
    await expect(
      fetch(`${url}/v1/events`, { method: 'POST', headers: NDJSON, body: lines[0]! }),
    ).rejects.toThrow();
    expect(await sidecar.exited).toEqual({ code: 4, signal: null });

    expect(sidecar.stderr()).toMatch(
      /shutdown timeout: 20 spans were not delivered; the checkpoint stays before them/,
    );
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { offset: number };
    expect(saved.offset).toBe(0);
  });
});
