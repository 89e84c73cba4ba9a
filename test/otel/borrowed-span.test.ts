import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBus } from '../../src/bus/index.js';
import { resetGlobals } from '../mcp/mcp-harness.js';
import { startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** A streamed call on the bus: invoke, two partials, the result; returns what its handler saw active. */
function streamedCall(bus: EventBus, id: string): string | undefined {
  let active: string | undefined;
  const off = bus.subscribe('tool.invoke', () => {
    active = trace.getActiveSpan()?.spanContext().spanId;
  });
  const invoke = bus.emit('tool.invoke', { id, name: 'forecast', arguments: { city: 'Paris' } });
  off();
  for (const sequence of [1, 2]) {
    bus.emit(
      'tool.stream.partial',
      { tool_name: 'forecast', tool_id: id, turn_id: '', sequence, payload: 'chunk' },
      { causation: { parentId: invoke.id } },
    );
  }
  bus.emit(
    'tool.result',
    { id, name: 'forecast', output: 'sun' },
    { causation: { parentId: invoke.id } },
  );
  return active;
}

describe('traceToolCalls()', () => {
  describe('a call dispatched inside the span that executes it (AI SDK 7 telemetry)', () => {
    it('puts its stream and ids on that span instead of opening a second, and leaves its status, name and end to its owner', async () => {
      harness = await startTracingHarness({ register: true });
      const owner = harness.provider.getTracer('gen_ai').startSpan('execute_tool forecast', {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.call.id': 'call_1',
          'gen_ai.tool.type': 'extension',
        },
      });
      const active = context.with(trace.setSpan(context.active(), owner), () =>
        streamedCall(harness!.bus, 'call_1'),
      );
      expect(harness.tracing.stats().openSpans).toBe(0);
      owner.end();

      const spans = await harness.spans(1);
      expect(spans).toHaveLength(1);
      const [span] = spans;
      expect(span!.spanId).toBe(owner.spanContext().spanId);
      expect(span!.scope.name).toBe('gen_ai');
      expect(span!.name).toBe('execute_tool forecast');
      expect(span!.events.map((event) => event.name)).toEqual([
        'tool.stream.partial',
        'tool.stream.partial',
      ]);
      expect(span!.attributes).toMatchObject({
        'gen_ai.tool.type': 'extension',
        'gen_ai.tool.name': 'forecast',
        'tooltrace.stream.partial.count': 2,
        'tooltrace.end_reason': 'result',
      });
      expect(span!.attributes['tooltrace.event.id']).toMatch(/^[0-9a-f]{32}$/);
      expect(span!.status.code).toBe(0);
      // The invoke's handlers (the tool's code) run inside the owner's span.
      expect(active).toBe(owner.spanContext().spanId);
    });

    it('opens its own span under a span that executes another call, or that is no execute_tool span', async () => {
      harness = await startTracingHarness({ register: true });
      const tracer = harness.provider.getTracer('ai');
      const other = tracer.startSpan('execute_tool forecast', {
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.call.id': 'call_9' },
      });
      // The AI SDK 6's span (experimental_telemetry): no gen_ai.operation.name.
      const legacy = tracer.startSpan('ai.toolCall', {
        attributes: { 'ai.toolCall.id': 'call_2' },
      });
      context.with(trace.setSpan(context.active(), other), () =>
        streamedCall(harness!.bus, 'call_1'),
      );
      context.with(trace.setSpan(context.active(), legacy), () =>
        streamedCall(harness!.bus, 'call_2'),
      );
      other.end();
      legacy.end();

      const spans = await harness.spans(4);
      const ours = spans.filter((span) => span.scope.name === 'tooltrace');
      expect(ours.map((span) => span.parentSpanId).sort()).toEqual(
        [other.spanContext().spanId, legacy.spanContext().spanId].sort(),
      );
      for (const span of ours) expect(span.attributes['tooltrace.stream.partial.count']).toBe(2);
    });
  });
});
