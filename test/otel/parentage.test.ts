import { ROOT_CONTEXT, context, propagation, trace, type Context } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import type { BusEvent, EventBus } from '../../src/bus/index.js';
import { StreamingToolPlugin, type ChannelTool } from '../../src/streamtool/index.js';
import type { ToolEvent } from '../../src/streamtool/index.js';
import { spanOfCall, startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  trace.disable();
  context.disable();
  propagation.disable();
});

function invoke(bus: EventBus, id: string, parent: BusEvent | undefined, depth = 0): BusEvent {
  return bus.emit(
    'tool.invoke',
    { id, name: `tool_${id}`, arguments: {} },
    { causation: { parentId: parent?.id ?? '', depth } },
  );
}

function result(bus: EventBus, id: string, call: BusEvent): BusEvent {
  return bus.emit(
    'tool.result',
    { id, name: `tool_${id}`, output: 'ok' },
    { causation: { parentId: call.id, depth: call.causation.depth } },
  );
}

function llm(bus: EventBus, parent: BusEvent, depth: number): BusEvent {
  return bus.emit('llm.response', { text: '…' }, { causation: { parentId: parent.id, depth } });
}

describe('traceToolCalls()', () => {
  describe('parentage', () => {
    it('nests tool → sub-agent → tool three levels deep across llm.response events', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      const { bus } = harness;
      const input = bus.emit('user.input', { text: 'research otel' });
      const a = invoke(bus, 'A', llm(bus, input, 0), 0);
      // A runs a sub-agent (depth 1) whose model asks for B; B runs one (depth 2) that asks for C.
      const b = invoke(bus, 'B', llm(bus, a, 1), 1);
      const c = invoke(bus, 'C', llm(bus, b, 2), 2);
      const resultC = result(bus, 'C', c);
      // The depth-2 sub-agent reads C's result and asks for D: D is C's sibling, under B.
      const d = invoke(bus, 'D', llm(bus, resultC, 2), 2);
      result(bus, 'D', d);
      const resultB = result(bus, 'B', b);
      const e = invoke(bus, 'E', llm(bus, resultB, 1), 1);
      result(bus, 'E', e);
      result(bus, 'A', a);

      const spans = await harness.spans(5);
      const [spanA, spanB, spanC, spanD, spanE] = ['A', 'B', 'C', 'D', 'E'].map((id) =>
        spanOfCall(spans, id),
      );
      expect(spanA!.parentSpanId).toBe('');
      expect(spanB!.parentSpanId).toBe(spanA!.spanId);
      expect(spanC!.parentSpanId).toBe(spanB!.spanId);
      expect(spanD!.parentSpanId).toBe(spanB!.spanId);
      expect(spanE!.parentSpanId).toBe(spanA!.spanId);
      // The first llm.response has no turn around it: its chat span is a trace of its own.
      const tools = spans.filter((span) => span.name.startsWith('execute_tool'));
      expect(new Set(tools.map((span) => span.traceId)).size).toBe(1);
      expect(spanC!.attributes['tooltrace.depth']).toBe(2);
      expect(spanC!.attributes['tooltrace.event.parent_id']).toBeTypeOf('string');
    });

    it('nests calls that a running tool makes, with causation carried through async code', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      const { bus } = harness;
      const researcher: ChannelTool = {
        name: 'research',
        async *stream(): AsyncGenerator<ToolEvent> {
          yield { kind: 'progress', progress: 0, payload: 'thinking' };
          // A sub-agent inside the tool: its model response asks for a search.
          const answer = new Promise<string>((resolve) => {
            const stop = bus.subscribe('tool.result', (event) => {
              const payload = event.payload as { id: string; output: string };
              if (payload.id !== 'tc_search') return;
              stop();
              resolve(payload.output);
            });
          });
          await Promise.resolve();
          bus.withCausation({ depth: 1 }, () =>
            bus.emit('llm.response', { tool: { id: 'tc_search', name: 'search' } }),
          );
          yield { kind: 'complete', payload: await answer };
        },
      };
      bus.subscribe('llm.response', (event) => {
        const payload = event.payload as { tool?: { id: string; name: string } };
        if (payload.tool !== undefined) {
          bus.emit('tool.invoke', { ...payload.tool, arguments: { q: 'x' } });
        }
      });
      const research = new StreamingToolPlugin('research', () => researcher);
      const search = new StreamingToolPlugin('search', () => ({
        name: 'search',
        execute: async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return 'three results';
        },
      }));
      research.attach(bus);
      search.attach(bus);
      bus.emit('tool.invoke', { id: 'tc_research', name: 'research', arguments: {} });
      await expect.poll(() => harness!.tracing.stats().spansEnded.result).toBe(2);

      const spans = await harness.spans(2);
      const outer = spanOfCall(spans, 'tc_research');
      const inner = spanOfCall(spans, 'tc_search');
      expect(inner.parentSpanId).toBe(outer.spanId);
      expect(inner.traceId).toBe(outer.traceId);
      expect(inner.attributes['tooltrace.depth']).toBe(1);
      expect(inner.startTimeUnixNano).toBeGreaterThan(outer.startTimeUnixNano);
      expect(inner.endTimeUnixNano).toBeLessThan(outer.endTimeUnixNano);
      await Promise.all([research.shutdown(), search.shutdown()]);
    });

    it('parents a call on the OpenTelemetry context active when tool.invoke is emitted', async () => {
      harness = await startTracingHarness({ encoding: 'proto', register: true });
      const { bus, provider } = harness;
      const request = provider.getTracer('http').startSpan('GET /chat');
      context.with(trace.setSpan(context.active(), request), () => {
        const call = invoke(bus, 'A', undefined);
        result(bus, 'A', call);
      });
      request.end();

      const spans = await harness.spans(2);
      const http = spans.find((span) => span.name === 'GET /chat')!;
      const tool = spanOfCall(spans, 'A');
      expect(tool.parentSpanId).toBe(http.spanId);
      expect(tool.traceId).toBe(http.traceId);
    });

    it('parents a call through the parentContext hook, for a traceparent from elsewhere', async () => {
      const remote = {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: 1,
        isRemote: true,
      };
      const seen: string[] = [];
      harness = await startTracingHarness({
        encoding: 'proto',
        tracing: {
          parentContext: (event): Context | undefined => {
            seen.push(event.type);
            return trace.setSpanContext(ROOT_CONTEXT, remote);
          },
        },
      });
      const { bus } = harness;
      const a = invoke(bus, 'A', undefined);
      const b = invoke(bus, 'B', a);
      result(bus, 'B', b);
      result(bus, 'A', a);

      const spans = await harness.spans(2);
      expect(spanOfCall(spans, 'A')).toMatchObject({
        traceId: remote.traceId,
        parentSpanId: remote.spanId,
      });
      // B has a causal ancestor span, so the hook is not asked about it.
      expect(spanOfCall(spans, 'B').parentSpanId).toBe(spanOfCall(spans, 'A').spanId);
      expect(seen).toEqual(['tool.invoke']);
    });

    it('falls back to the parent call id when causation names no ancestor', async () => {
      harness = await startTracingHarness({ encoding: 'proto' });
      const { bus } = harness;
      const a = invoke(bus, 'A', undefined);
      const b = bus.emit('tool.invoke', {
        id: 'B',
        name: 'child',
        arguments: {},
        parentCallId: 'A',
      });
      result(bus, 'B', b);
      result(bus, 'A', a);
      const spans = await harness.spans(2);
      expect(spanOfCall(spans, 'B').parentSpanId).toBe(spanOfCall(spans, 'A').spanId);
      expect(spanOfCall(spans, 'B').attributes['tooltrace.tool.parent_call.id']).toBe('A');
    });
  });

  describe('traceBy', () => {
    /** Two turns of one session: each a root event with two sequential parentless calls. */
    function twoTurns(bus: EventBus, session: string): void {
      bus.withCausation({ sessionId: session }, () => {
        for (const turn of ['1', '2']) {
          const input = bus.emit('user.input', { turn });
          const first = invoke(bus, `${session}-${turn}a`, llm(bus, input, 0));
          const done = result(bus, `${session}-${turn}a`, first);
          const second = invoke(bus, `${session}-${turn}b`, llm(bus, done, 0));
          result(bus, `${session}-${turn}b`, second);
        }
      });
    }

    function traceOf(spans: Parameters<typeof spanOfCall>[0], id: string): string {
      return spanOfCall(spans, id).traceId;
    }

    it("shares one trace among every call under the same root event ('causal-root')", async () => {
      harness = await startTracingHarness({ encoding: 'proto', derivedIds: true });
      twoTurns(harness.bus, 's1');
      const spans = await harness.spans(4);
      expect(spans.every((span) => span.parentSpanId === '')).toBe(true);
      expect(traceOf(spans, 's1-1a')).toBe(traceOf(spans, 's1-1b'));
      expect(traceOf(spans, 's1-2a')).toBe(traceOf(spans, 's1-2b'));
      expect(traceOf(spans, 's1-1a')).not.toBe(traceOf(spans, 's1-2a'));
    });

    it("shares one trace per session ('session')", async () => {
      harness = await startTracingHarness({
        encoding: 'proto',
        derivedIds: true,
        tracing: { traceBy: 'session' },
      });
      twoTurns(harness.bus, 's1');
      twoTurns(harness.bus, 's2');
      const spans = await harness.spans(8);
      const s1 = new Set(['1a', '1b', '2a', '2b'].map((call) => traceOf(spans, `s1-${call}`)));
      const s2 = new Set(['1a', '1b', '2a', '2b'].map((call) => traceOf(spans, `s2-${call}`)));
      expect(s1.size).toBe(1);
      expect(s2.size).toBe(1);
      expect([...s1][0]).not.toBe([...s2][0]);
    });

    it("gives every parentless call its own trace ('call')", async () => {
      harness = await startTracingHarness({
        encoding: 'proto',
        derivedIds: true,
        tracing: { traceBy: 'call' },
      });
      twoTurns(harness.bus, 's1');
      const spans = await harness.spans(8);
      const tools = spans.filter((span) => span.name.startsWith('execute_tool'));
      expect(new Set(tools.map((span) => span.traceId)).size).toBe(4);
    });
  });
});
