import { describe, expect, it } from 'vitest';
import { parseSidecarArgs } from '../../src/cli/parse-sidecar-args.js';
import { DerivedIdGenerator } from '../../src/otel/index.js';
import { resolveSidecarSettings } from '../../src/sidecar/sidecar-settings.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { startSidecar, useReceiver, type SidecarProcess } from './sidecar-process.js';

const INVOKE_ID = '1'.repeat(32);

/** One envelope line of the call under test, stamped with the current time (a live agent). */
function line(seq: number, type: string, eventId: string, payload: unknown): string {
  return `${JSON.stringify({
    seq,
    ts: new Date().toISOString(),
    type,
    event_id: eventId,
    parent_id: type === 'tool.invoke' ? '' : INVOKE_ID,
    source: 'indexer',
    session_id: 's1',
    agent_id: 'a1',
    depth: 0,
    payload,
  })}\n`;
}

const invokeLine = (): string =>
  line(1, 'tool.invoke', INVOKE_ID, {
    _schema_version: 1,
    ID: 'tc_1',
    Name: 'index_files',
    Arguments: { root: 'src/' },
  });

const progressLine = (sequence: number, progress: number): string =>
  line(sequence + 1, 'tool.stream.progress', sequence.toString(16).padStart(32, '0'), {
    tool_name: 'index_files',
    tool_id: 'tc_1',
    turn_id: 't1',
    sequence,
    progress,
  });

const isSnapshot = (span: ReceivedSpan): boolean => span.attributes['tooltrace.inflight'] === true;

describe('tooltrace sidecar, live updates', () => {
  const testbed = useReceiver();

  /** Resolves with the first arrived snapshot that `accept`s, polling in real time. */
  async function snapshotWhere(
    accept: (span: ReceivedSpan) => boolean,
    timeoutMs: number,
  ): Promise<ReceivedSpan> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = testbed.receiver.spans.find((span) => isSnapshot(span) && accept(span));
      if (found !== undefined) return found;
      if (Date.now() > deadline) {
        throw new Error(
          `no such in-flight snapshot within ${timeoutMs} ms; received: ${testbed.receiver.spans
            .map((span) => `${span.name} ${JSON.stringify(span.attributes)}`)
            .join('\n')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('shows a running call while it runs, keeps it current, and leaves it behind when killed', async () => {
    const sidecar: SidecarProcess = startSidecar(['--stdin', '--status-interval', '0'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
      keepStdinOpen: true,
    });
    await sidecar.waitForStderr(/exporting to/);

    sidecar.child.stdin!.write(invokeLine() + progressLine(1, 0.1) + progressLine(2, 0.2));
    // Due after 1 s open (ticks of 250 ms), plus the sidecar's 200 ms export delay; the wait is
    // long only so that a loaded machine does not fail it (the interval itself is tested with
    // fake timers).
    const first = await snapshotWhere(() => true, 15_000);
    const finalSpanId = new DerivedIdGenerator().spanIdFor(INVOKE_ID);
    expect(first.name).toBe('execute_tool index_files (in flight)');
    expect(first.parentSpanId).toBe(finalSpanId);
    expect(first.attributes).toMatchObject({
      'gen_ai.tool.name': 'index_files',
      'gen_ai.tool.call.id': 'tc_1',
      'gen_ai.conversation.id': 's1',
      'gen_ai.agent.id': 'a1',
      'tooltrace.event.id': INVOKE_ID,
      'tooltrace.inflight.update': 1,
      'tooltrace.stream.progress.count': 2,
      'tooltrace.stream.last_progress': 0.2,
    });
    expect(first.attributes).not.toHaveProperty('tooltrace.stream.payload');

    sidecar.child.stdin!.write(progressLine(3, 0.5));
    const latest = await snapshotWhere(
      (span) => span.attributes['tooltrace.stream.last_progress'] === 0.5,
      15_000,
    );
    expect(latest.attributes['tooltrace.inflight.update']).toBe(2);
    expect(latest.traceId).toBe(first.traceId);
    expect(latest.parentSpanId).toBe(finalSpanId);

    sidecar.child.kill('SIGKILL');
    expect((await sidecar.exited).signal).toBe('SIGKILL');
    // What was exported stays: the call, its last progress, and no final span (never finished).
    const spans = testbed.receiver.spans;
    expect(spans.length).toBeGreaterThanOrEqual(2);
    expect(spans.every(isSnapshot)).toBe(true);
    expect(spans.some((span) => span.spanId === finalSpanId)).toBe(false);
    const newest = spans.reduce((a, b) =>
      Number(b.attributes['tooltrace.inflight.update']) >
      Number(a.attributes['tooltrace.inflight.update'])
        ? b
        : a,
    );
    expect(newest.attributes['tooltrace.stream.last_progress']).toBe(0.5);
  });

  it('exports no snapshot with --no-live-updates', async () => {
    const sidecar = startSidecar(
      ['--stdin', '--status-interval', '0', '--live-interval', '20ms', '--no-live-updates'],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url }, keepStdinOpen: true },
    );
    await sidecar.waitForStderr(/exporting to/);
    // The call stays open for many live intervals, streaming, then ends.
    for (let sequence = 1; sequence <= 4; sequence += 1) {
      sidecar.child.stdin!.write(
        (sequence === 1 ? invokeLine() : '') + progressLine(sequence, sequence / 5),
      );
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    sidecar.child.stdin!.end(
      line(9, 'tool.result', '9'.repeat(32), {
        _schema_version: 1,
        ID: 'tc_1',
        Name: 'index_files',
        Output: 'done',
      }),
    );
    expect((await sidecar.exited).code).toBe(0);
    expect(testbed.receiver.spans.map((span) => span.name)).toEqual(['execute_tool index_files']);
  });

  it('parses --live-interval and --no-live-updates', () => {
    const parse = (args: string[]) => {
      const parsed = parseSidecarArgs(['--stdin', ...args]);
      return parsed.help ? undefined : parsed.options;
    };
    expect(parse(['--live-interval', '250ms'])).toMatchObject({ liveIntervalMs: 250 });
    expect(parse(['--live-interval', '2s'])).toMatchObject({ liveIntervalMs: 2_000 });
    expect(parse(['--no-live-updates'])).toMatchObject({ liveUpdates: false });
    expect(parse([])).not.toHaveProperty('liveUpdates');
    // Refused before anything starts, with the range every duration flag has.
    expect(() => resolveSidecarSettings({ ...parse(['--live-interval', '5ms']), env: {} })).toThrow(
      /--live-interval must be from 10ms/,
    );
    expect(() => parse(['--live-interval', 'soon'])).toThrow(/--live-interval/);
  });
});
