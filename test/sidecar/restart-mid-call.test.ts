import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReceivedMetricPoint, ReceivedSpan } from '../../src/testing/index.js';
import { callLines, eventIdFor, eventLine, resultLine } from './journal-lines.js';
import { divergentDuplicates, finalSpans } from './received-spans.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

const TURN_START = eventIdFor('turn-start');

/** A partial of call `callId` (a child of its invoke), as a line. */
function partialLine(callId: string, sequence: number, seq: number): string {
  return eventLine({
    type: 'tool.stream.partial',
    eventId: eventIdFor(`partial-${callId}-${sequence}`),
    parentId: eventIdFor(`invoke-${callId}`),
    seq,
    payload: { tool_name: 'search', tool_id: callId, sequence, payload: `part ${sequence}` },
  });
}

/**
 * The journal up to the interruption: a turn, in it tc_done (complete), tc_cut (invoked, two
 * partials, no result yet) and tc_after (complete, written after tc_cut's invoke).
 */
const BEFORE = [
  eventLine({ type: 'agent.turn.start', eventId: TURN_START, seq: 1, payload: { turnId: 't1' } }),
  ...callLines('tc_done', { seq: 2, parentId: TURN_START }),
  ...callLines('tc_cut', { seq: 4, parentId: TURN_START, open: true }),
  partialLine('tc_cut', 1, 5),
  partialLine('tc_cut', 2, 6),
  ...callLines('tc_after', { seq: 7, parentId: TURN_START }),
];

/** What the agent writes after the sidecar was stopped: tc_cut goes on and ends, the turn too. */
const AFTER = [
  partialLine('tc_cut', 3, 20),
  resultLine('tc_cut', 21),
  eventLine({
    type: 'agent.turn.end',
    eventId: eventIdFor('turn-end'),
    parentId: eventIdFor('result-tc_cut'),
    seq: 22,
    payload: { turnId: 't1' },
  }),
];

/** The last cumulative `gen_ai.execute_tool.duration` count of each sidecar run, per tool call. */
function callsCounted(points: readonly ReceivedMetricPoint[]): number {
  const lastByRun = new Map<unknown, number>();
  for (const point of points) {
    if (point.name !== 'gen_ai.execute_tool.duration') continue;
    const run = point.resource['service.instance.id'];
    // One histogram point per run and attribute set; every call here has the same attributes.
    lastByRun.set(run, point.count ?? 0);
  }
  return [...lastByRun.values()].reduce((sum, count) => sum + count, 0);
}

const callOf = (span: ReceivedSpan): unknown => span.attributes['gen_ai.tool.call.id'];

describe('tooltrace sidecar stopped with SIGINT during a call, then restarted', () => {
  const testbed = useReceiver({ directory: 'tooltrace-restart-' });

  it('exports no span id twice with different content, and counts every call once', async () => {
    const journal = join(testbed.directory, 'journal.jsonl');
    const checkpoint = join(testbed.directory, 'checkpoint.json');
    const follow = () =>
      startSidecar(['--file', journal, '--checkpoint', checkpoint, '--status-interval', '0'], {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url,
          // The default export interval is a minute: only each run's final export counts.
          OTEL_METRIC_EXPORT_INTERVAL: '60000',
        },
      });
    writeFileSync(journal, `${BEFORE.join('\n')}\n`);

    const first = follow();
    await expect
      .poll(() => new Set(finalSpans(testbed.receiver.spans).map(callOf)), { timeout: 20_000 })
      .toEqual(new Set(['tc_done', 'tc_after']));
    first.child.kill('SIGINT');
    expect(await first.exited, first.stderr()).toEqual({ code: 0, signal: null });
    const firstRun = [...testbed.receiver.spans];

    appendFileSync(journal, `${AFTER.join('\n')}\n`);
    const second = follow();
    // Its end read, each is exported whole: the call OK, the turn ended by its end event.
    const ended = () =>
      finalSpans(testbed.receiver.spans).filter(
        (span) =>
          (callOf(span) === 'tc_cut' || span.name.startsWith('invoke_agent')) &&
          span.attributes['tooltrace.end_reason'] === 'result',
      );
    await expect.poll(() => ended().length, { timeout: 20_000 }).toBe(2);
    second.child.kill('SIGTERM');
    expect(await second.exited, second.stderr()).toEqual({ code: 0, signal: null });
    const spans = testbed.receiver.spans;

    // The rule: one span id, one content.
    expect(divergentDuplicates(spans)).toEqual([]);
    // The cut call and the open turn went out in the first run as in-flight snapshots marked
    // shutdown, children of the span ids their real spans take when their end is read.
    const cut = firstRun.filter((span) => span.attributes['tooltrace.end_reason'] === 'shutdown');
    expect(cut.map((span) => [span.name, span.attributes['tooltrace.inflight']]).sort()).toEqual([
      ['execute_tool search (in flight)', true],
      ['invoke_agent agent-1 (in flight)', true],
    ]);
    const finals = finalSpans(spans);
    const tcCut = finals.find((span) => callOf(span) === 'tc_cut')!;
    expect(tcCut.status.code).toBe(1);
    expect(tcCut.attributes['tooltrace.stream.partial.count']).toBe(3);
    const turn = finals.find((span) => span.name.startsWith('invoke_agent'))!;
    expect(turn.attributes['tooltrace.end_reason']).toBe('result');
    expect(cut.map((span) => span.parentSpanId).sort()).toEqual([tcCut.spanId, turn.spanId].sort());
    // Three calls, each measured once across both runs (tc_after is read again in the second).
    expect(callsCounted(testbed.receiver.metrics)).toBe(3);
  });
});
