import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventInit } from '../../src/bus/index.js';
import { at, spanOfCall, startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await harness?.close();
  harness = undefined;
});

const INVOKE_ID = 'a'.repeat(32);

function call(id = 'tc_1', invokeId = INVOKE_ID): Record<string, EventInit> {
  const child = { parentId: invokeId, sessionId: 's1' };
  const stream = { tool_name: 'search', tool_id: id, turn_id: 't1' };
  return {
    invoke: {
      type: 'tool.invoke',
      id: invokeId,
      payload: { id, name: 'search', arguments: {} },
      timeUnixNano: at(0),
      causation: { sessionId: 's1' },
    },
    progress: {
      type: 'tool.stream.progress',
      id: `${invokeId.slice(0, 31)}1`,
      payload: { ...stream, sequence: 1, progress: 0.25, payload: 'p' },
      timeUnixNano: at(1),
      causation: child,
    },
    partial: {
      type: 'tool.stream.partial',
      id: `${invokeId.slice(0, 31)}2`,
      payload: { ...stream, sequence: 2, payload: 'abc' },
      timeUnixNano: at(2),
      causation: child,
    },
    result: {
      type: 'tool.result',
      id: `${invokeId.slice(0, 31)}3`,
      payload: { id, name: 'search', output: 'abc' },
      timeUnixNano: at(3),
      causation: child,
    },
  };
}

describe('traceToolCalls()', () => {
  describe('out-of-order, duplicate and orphan events', () => {
    it('holds stream events and a result that arrive before their invoke', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      const events = call();
      for (const name of ['result', 'partial', 'progress', 'invoke']) {
        harness.bus.emitEvent(events[name]!);
      }
      const [span] = await harness.spans(1);
      expect(span).toMatchObject({
        startTimeUnixNano: at(0),
        endTimeUnixNano: at(3),
        status: { code: 1 },
      });
      expect(span!.events.map((event) => event.name)).toEqual([
        'tool.stream.progress',
        'tool.stream.partial',
      ]);
      expect(span!.attributes['tooltrace.invoke.missing']).toBeUndefined();
      expect(harness.tracing.stats()).toMatchObject({ heldEvents: 0, orphanSpans: 0 });
    });

    it('ignores events seen twice', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      const events = call();
      for (const name of ['invoke', 'invoke', 'progress', 'partial', 'progress', 'partial']) {
        harness.bus.emitEvent(events[name]!);
      }
      harness.bus.emitEvent(events['result']!);
      harness.bus.emitEvent(events['result']!);
      harness.bus.emitEvent(events['invoke']!);
      const [span] = await harness.spans(1);
      expect(span!.events).toHaveLength(2);
      expect(span!.attributes['tooltrace.stream.partial.count']).toBe(1);
      expect(harness.tracing.stats()).toMatchObject({
        spansStarted: 1,
        duplicateEvents: 4,
        lateEvents: 1,
      });
      expect(harness.receiver.spans).toHaveLength(1);
    });

    it('accepts a stream event that arrives after later ones, once', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      const events = call();
      const late = {
        ...events['partial']!,
        payload: { ...(events['partial']!.payload as object), sequence: 3 },
      };
      harness.bus.emitEvent(events['invoke']!);
      harness.bus.emitEvent(late);
      harness.bus.emitEvent(events['partial']!);
      harness.bus.emitEvent(events['partial']!);
      harness.bus.emitEvent(events['result']!);
      const [span] = await harness.spans(1);
      expect(span!.attributes['tooltrace.stream.partial.count']).toBe(2);
      expect(harness.tracing.stats().duplicateEvents).toBe(1);
    });

    it('records stream events that arrive out of order in time order', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      const events = call();
      harness.bus.emitEvent(events['invoke']!);
      harness.bus.emitEvent(events['partial']!);
      harness.bus.emitEvent(events['progress']!);
      harness.bus.emitEvent(events['result']!);
      const [span] = await harness.spans(1);
      expect(span!.events.map((event) => event.timeUnixNano)).toEqual([at(1), at(2)]);
      expect(span!.events.map((event) => event.name)).toEqual([
        'tool.stream.progress',
        'tool.stream.partial',
      ]);
    });

    it('still makes a span from a result whose invoke never comes', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      harness = await startTracingHarness({
        encoding: 'proto',
        tracing: { reorderWindowMs: 2_000 },
      });
      const events = call();
      harness.bus.emitEvent(events['partial']!);
      harness.bus.emitEvent(events['result']!);
      vi.advanceTimersByTime(1_000);
      expect(harness.tracing.stats()).toMatchObject({ heldEvents: 2, spansStarted: 0 });
      vi.advanceTimersByTime(2_500);
      expect(harness.tracing.stats()).toMatchObject({ heldEvents: 0, orphanSpans: 1 });

      const [span] = await harness.spans(1);
      expect(span).toMatchObject({
        name: 'execute_tool search',
        startTimeUnixNano: at(2),
        endTimeUnixNano: at(3),
        status: { code: 1 },
      });
      expect(span!.attributes).toMatchObject({
        'gen_ai.tool.call.id': 'tc_1',
        'gen_ai.conversation.id': 's1',
        'tooltrace.turn.id': 't1',
        'tooltrace.invoke.missing': true,
        'tooltrace.stream.partial.count': 1,
      });
    });

    it('attaches an invoke that arrives after its span was started from stream events', async () => {
      harness = await startTracingHarness({ encoding: 'proto', tracing: { reorderWindowMs: 0 } });
      const events = call();
      harness.bus.emitEvent(events['partial']!);
      harness.bus.emitEvent(events['invoke']!);
      harness.bus.emitEvent(events['result']!);
      const [span] = await harness.spans(1);
      expect(span!.attributes).toMatchObject({
        'tooltrace.event.id': INVOKE_ID,
        'tooltrace.invoke.late': true,
      });
      expect(span!.attributes['tooltrace.invoke.missing']).toBeUndefined();
      expect(harness.tracing.stats().spansStarted).toBe(1);
    });

    it('pairs events by tool call id when the journal has no event ids', async () => {
      harness = await startTracingHarness({
        encoding: 'proto',
        tracing: { stableEventId: () => '' },
      });
      for (const id of ['tc_1', 'tc_2']) {
        const events = call(id);
        for (const name of ['invoke', 'progress', 'partial', 'result']) {
          const { causation, ...event } = events[name]!;
          harness.bus.emitEvent({
            ...event,
            id: undefined,
            causation: { ...causation, parentId: '' },
          });
        }
      }
      const spans = await harness.spans(2);
      for (const id of ['tc_1', 'tc_2']) {
        const span = spanOfCall(spans, id);
        expect(span.events).toHaveLength(2);
        expect(span.status.code).toBe(1);
        expect(span.attributes['tooltrace.event.id']).toBeUndefined();
      }
    });

    it('counts stream events that name no call', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      harness.bus.emit('tool.stream.partial', { sequence: 1, payload: 'x' });
      expect(harness.tracing.stats().unpairedEvents).toBe(1);
    });
  });
});
