import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { invokeIdOf, journalText } from './journal-lines.js';
import { divergentDuplicates, spanSignature } from './received-spans.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

describe('tooltrace sidecar --stdin', () => {
  const testbed = useReceiver();

  const run = (input: string, args: string[] = []) =>
    startSidecar(['--stdin', ...args], {
      input,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });

  it('exits 2 when standard input is a directory, instead of reading nothing and exiting 0', async () => {
    const directory = openSync(tmpdir(), 'r');
    const child = spawn(process.execPath, ['dist/cli.js', 'sidecar', '--stdin'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: [directory, 'ignore', 'pipe'],
      env: { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });
    closeSync(directory);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(2);
    expect(stderr).toContain('--stdin: standard input is a directory');
  });

  it('exports every call at end of input, open ones included, and exits 0', async () => {
    const sidecar = run(journalText({ calls: 300, leaveLastOpen: true }));

    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    const spans = testbed.receiver.spans;
    expect(spans).toHaveLength(300);
    const open = spans.filter((span) => span.attributes['tooltrace.end_reason'] === 'shutdown');
    expect(open.map((span) => span.attributes['gen_ai.tool.call.id'])).toEqual(['tc_299']);
    // Nothing resumes a --stdin run: the unanswered call is ended and exported as itself, not
    // cut into an in-flight snapshot whose parent (the call's span) would never arrive.
    expect(open[0]!.name).toMatch(/^execute_tool [a-z_]+$/);
    expect(open[0]!.attributes['tooltrace.inflight']).toBeUndefined();
    const ids = new Set(spans.map((span) => span.spanId));
    expect(spans.filter((span) => span.parentSpanId !== '' && !ids.has(span.parentSpanId))).toEqual(
      [],
    );
    expect(spans.filter((span) => span.status.code === 1)).toHaveLength(299);
    expect(sidecar.stderr()).toMatch(/3599 events, 0 rejected, 0 calls open, 300 spans exported/);
  });

  it('continues the trace an envelope traceparent names, for current and later versions', async () => {
    const traceId = 'a1'.repeat(16);
    const lines = journalText({ calls: 2 })
      .trimEnd()
      .split('\n')
      .map((line) => {
        const envelope = JSON.parse(line) as {
          type: string;
          payload: { ID?: string; id?: string };
        };
        if (envelope.type !== 'tool.invoke') return line;
        const first = (envelope.payload.ID ?? envelope.payload.id) === 'tc_0';
        const traceparent = first
          ? `00-${traceId}-${'b2'.repeat(8)}-01`
          : `01-${traceId}-${'c3'.repeat(8)}-01-future-field`;
        return JSON.stringify({ ...envelope, traceparent });
      });
    expect((await run(`${lines.join('\n')}\n`).exited).code).toBe(0);
    const byCall = new Map(
      testbed.receiver.spans.map((span) => [span.attributes['gen_ai.tool.call.id'], span] as const),
    );
    expect(byCall.get('tc_0')).toMatchObject({ traceId, parentSpanId: 'b2'.repeat(8) });
    expect(byCall.get('tc_1')).toMatchObject({ traceId, parentSpanId: 'c3'.repeat(8) });
  });

  it('gives the same input the same trace and span ids', async () => {
    const input = journalText({ calls: 50, nested: true });
    expect((await run(input).exited).code).toBe(0);
    const first = testbed.receiver.spans.map(spanSignature);
    testbed.receiver.clear();
    expect((await run(input).exited).code).toBe(0);
    const second = testbed.receiver.spans.map(spanSignature);

    expect(first).toHaveLength(50);
    expect(new Set(second)).toEqual(new Set(first));
  });

  it('nests calls under the call that caused them, in one trace', async () => {
    const sidecar = run(journalText({ calls: 5, nested: true }));
    expect((await sidecar.exited).code).toBe(0);

    const byCall = new Map(
      testbed.receiver.spans.map((span) => [span.attributes['gen_ai.tool.call.id'], span]),
    );
    expect(new Set(testbed.receiver.spans.map((span) => span.traceId)).size).toBe(1);
    expect(byCall.get('tc_0')!.parentSpanId).toBe('');
    for (let index = 1; index < 5; index += 1) {
      expect(byCall.get(`tc_${index}`)!.parentSpanId).toBe(byCall.get(`tc_${index - 1}`)!.spanId);
      expect(byCall.get(`tc_${index}`)!.attributes['tooltrace.event.id']).toBe(invokeIdOf(index));
    }
  });

  it('retries at end of input until the receiver takes everything', async () => {
    testbed.receiver.failNext(3);
    const sidecar = run(journalText({ calls: 40 }));

    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    expect(sidecar.stderr()).toMatch(/failed \(503 Service Unavailable.*\); retrying/);
    expect(testbed.receiver.spans).toHaveLength(40);
    expect(divergentDuplicates(testbed.receiver.spans)).toEqual([]);
  });

  it('bounds the end-of-input flush by --shutdown-timeout and exits 4 naming the loss', async () => {
    testbed.receiver.setAvailable(false);
    const sidecar = run(journalText({ calls: 10 }), ['--shutdown-timeout', '1s']);

    expect(await sidecar.exited).toEqual({ code: 4, signal: null });
    expect(sidecar.stderr()).toMatch(/shutdown timeout: 10 spans were not delivered/);
    expect(sidecar.stderr()).toMatch(/10 spans were not delivered; exit code 4/);
  });

  it('names the first rejected lines by number and why, then counts the rest', async () => {
    const good = journalText({ calls: 1 }).trimEnd().split('\n');
    const bad = Array.from({ length: 7 }, (_, index) => `not json ${index}`);
    // Line 2 and lines 4 to 9 are bad; the call around them goes through.
    const lines = [good[0]!, bad[0]!, ...good.slice(1, 2), ...bad.slice(1), ...good.slice(2)];
    const sidecar = run(`${lines.join('\n')}\n`);

    expect(await sidecar.exited).toEqual({ code: 0, signal: null });
    const named = sidecar
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('tooltrace sidecar: stdin'));
    expect(named.map((line) => /^tooltrace sidecar: stdin(?: (line \d+))?/.exec(line)![1])).toEqual(
      ['line 2', 'line 4', 'line 5', 'line 6', 'line 7', undefined, undefined],
    );
    expect(named[0]).toMatch(/^tooltrace sidecar: stdin line 2: rejected \(not_json\): \S/);
    expect(named[5]).toBe(
      'tooltrace sidecar: stdin: more rejected lines are counted, not named (tooltrace_events_rejected_total, the status line)',
    );
    expect(named[6]).toBe('tooltrace sidecar: stdin: 2 more lines were rejected (7 lines in all)');
    expect(sidecar.stderr()).toMatch(/7 rejected \(not_json=7\)/);
    expect(testbed.receiver.spans.map((span) => span.name)).toEqual([
      expect.stringMatching(/^execute_tool /) as string,
    ]);
  });

  it('names one lost span in the singular', async () => {
    testbed.receiver.setAvailable(false);
    const sidecar = run(journalText({ calls: 1 }), ['--shutdown-timeout', '1s']);

    expect(await sidecar.exited).toEqual({ code: 4, signal: null });
    expect(sidecar.stderr()).toMatch(/shutdown timeout: 1 span was not delivered\n/);
    expect(sidecar.stderr()).toMatch(/: 1 span was not delivered; exit code 4\n/);
  });
});
