import { afterEach, describe, expect, it } from 'vitest';
import { StreamingToolPlugin, type ChannelTool } from '../../src/streamtool/index.js';
import type { ToolEvent } from '../../src/streamtool/index.js';
import {
  at,
  spanOfCall,
  startTracingHarness,
  type Encoding,
  type TracingHarness,
} from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe.each<Encoding>(['json', 'proto'])('traceToolCalls() over OTLP/HTTP %s', (encoding) => {
  it('starts an execute_tool span at the invoke timestamp and ends it at the result timestamp', async () => {
    harness = await startTracingHarness({ encoding });
    const { bus } = harness;
    bus.setDefaultCausation({ sessionId: 'session-1', agentId: 'agent-1' });
    const invoke = bus.emit(
      'tool.invoke',
      { id: 'tc_1', name: 'search', arguments: { query: 'otel' }, turnId: 'turn-1' },
      { timeUnixNano: at(0), source: 'agent' },
    );
    bus.emit(
      'tool.result',
      { id: 'tc_1', name: 'search', output: 'found' },
      { timeUnixNano: at(1234, 567), causation: { parentId: invoke.id } },
    );

    const [span] = await harness.spans(1);
    expect(span).toMatchObject({
      name: 'execute_tool search',
      kind: 1,
      parentSpanId: '',
      startTimeUnixNano: at(0),
      endTimeUnixNano: at(1234, 567),
      status: { code: 1, message: '' },
      droppedEventsCount: 0,
      encoding: encoding === 'proto' ? 'protobuf' : 'json',
    });
    expect(span!.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'search',
      'gen_ai.tool.call.id': 'tc_1',
      'gen_ai.tool.type': 'function',
      'gen_ai.conversation.id': 'session-1',
      'gen_ai.agent.id': 'agent-1',
      'gen_ai.agent.name': 'agent-1',
      'tooltrace.event.id': invoke.id,
      'tooltrace.event.sequence': invoke.causation.sequence,
      'tooltrace.event.source': 'agent',
      'tooltrace.turn.id': 'turn-1',
      'tooltrace.depth': 0,
      'tooltrace.end_reason': 'result',
      'tooltrace.result.event.id': expect.any(String) as string,
      'tooltrace.stream.partial.count': 0,
      'tooltrace.stream.progress.count': 0,
      'tooltrace.stream.partial.bytes': 0,
      'tooltrace.stream.events.recorded': 0,
      'tooltrace.stream.events.coalesced': 0,
    });
    expect(span!.events).toEqual([]);
    expect(span!.resource['service.name']).toBe('tooltrace-test');
    expect(span!.scope.name).toBe('tooltrace');
  });

  it('records progress and partial events as span events at their timestamps', async () => {
    harness = await startTracingHarness({ encoding });
    const { bus } = harness;
    const invoke = bus.emit(
      'tool.invoke',
      { id: 'tc_1', name: 'report', arguments: {} },
      {
        timeUnixNano: at(0),
      },
    );
    const child = { causation: { parentId: invoke.id } };
    const stream = { tool_name: 'report', tool_id: 'tc_1', turn_id: '' };
    bus.emit(
      'tool.stream.progress',
      { ...stream, sequence: 1, progress: -1, payload: 'starting' },
      { ...child, timeUnixNano: at(5, 1) },
    );
    bus.emit(
      'tool.stream.partial',
      { ...stream, sequence: 2, payload: 'héllo' },
      { ...child, timeUnixNano: at(10, 2) },
    );
    bus.emit(
      'tool.stream.progress',
      { ...stream, sequence: 3, progress: 0.5, payload: 'half' },
      { ...child, timeUnixNano: at(15, 3) },
    );
    bus.emit(
      'tool.stream.partial',
      { ...stream, sequence: 4, payload: { section: 2, text: 'abc' } },
      { ...child, timeUnixNano: at(20, 4) },
    );
    bus.emit(
      'tool.result',
      { id: 'tc_1', name: 'report', output: 'done' },
      {
        ...child,
        timeUnixNano: at(30),
      },
    );

    const [span] = await harness.spans(1);
    expect(span!.events).toEqual([
      {
        name: 'tool.stream.progress',
        timeUnixNano: at(5, 1),
        attributes: { 'tooltrace.stream.sequence': 1 },
      },
      {
        name: 'tool.stream.partial',
        timeUnixNano: at(10, 2),
        attributes: { 'tooltrace.stream.sequence': 2, 'tooltrace.stream.payload.bytes': 6 },
      },
      {
        name: 'tool.stream.progress',
        timeUnixNano: at(15, 3),
        attributes: { 'tooltrace.stream.sequence': 3, 'tooltrace.stream.progress': 0.5 },
      },
      {
        name: 'tool.stream.partial',
        timeUnixNano: at(20, 4),
        attributes: {
          'tooltrace.stream.sequence': 4,
          'tooltrace.stream.payload.bytes': JSON.stringify({ section: 2, text: 'abc' }).length,
        },
      },
    ]);
    expect(span!.attributes).toMatchObject({
      'tooltrace.stream.partial.count': 2,
      'tooltrace.stream.progress.count': 2,
      'tooltrace.stream.partial.bytes': 6 + JSON.stringify({ section: 2, text: 'abc' }).length,
      'tooltrace.stream.time_to_first_partial_ms': 10.000002,
      'tooltrace.stream.last_progress': 0.5,
      'tooltrace.stream.events.recorded': 4,
      'tooltrace.stream.events.coalesced': 0,
    });
  });
});

describe('traceToolCalls()', () => {
  it('keeps at most maxStreamEvents span events for 10,000 partials, first, spread and last', async () => {
    harness = await startTracingHarness({ encoding: 'proto' });
    const { bus } = harness;
    const invoke = bus.emit(
      'tool.invoke',
      { id: 'tc_big', name: 'tokens', arguments: {} },
      {
        timeUnixNano: at(0),
      },
    );
    const child = { causation: { parentId: invoke.id } };
    for (let sequence = 1; sequence <= 10_000; sequence += 1) {
      bus.emit(
        'tool.stream.partial',
        { tool_name: 'tokens', tool_id: 'tc_big', turn_id: '', sequence, payload: 'tok ' },
        { ...child, timeUnixNano: at(sequence) },
      );
    }
    bus.emit(
      'tool.result',
      { id: 'tc_big', name: 'tokens', output: '' },
      {
        ...child,
        timeUnixNano: at(10_001),
      },
    );

    const [span] = await harness.spans(1);
    const sequences = span!.events.map((event) => event.attributes['tooltrace.stream.sequence']);
    expect(span!.droppedEventsCount).toBe(0);
    expect(span!.events.length).toBeLessThanOrEqual(64);
    expect(span!.events.length).toBeGreaterThanOrEqual(16 + 24 + 1);
    // The first quarter as they came, the last one, and the middle evenly spaced.
    expect(sequences.slice(0, 16)).toEqual(Array.from({ length: 16 }, (_, index) => index + 1));
    expect(sequences.at(-1)).toBe(10_000);
    const middle = sequences.slice(16, -1) as number[];
    const gaps = middle.slice(1).map((value, index) => value - middle[index]!);
    expect(new Set(gaps).size).toBe(1);
    expect(middle[0]).toBe(17);
    expect(middle.at(-1)!).toBeGreaterThan(9_000);
    // Span events stay in time order.
    const times = span!.events.map((event) => event.timeUnixNano);
    expect([...times].sort((left, right) => (left < right ? -1 : left > right ? 1 : 0))).toEqual(
      times,
    );
    expect(span!.attributes).toMatchObject({
      'tooltrace.stream.partial.count': 10_000,
      'tooltrace.stream.partial.bytes': 40_000,
      'tooltrace.stream.events.recorded': span!.events.length,
      'tooltrace.stream.events.coalesced': 10_000 - span!.events.length,
    });
    expect(harness.tracing.stats().streamEventsCoalesced).toBe(10_000 - span!.events.length);
  });

  it('honours a smaller maxStreamEvents', async () => {
    harness = await startTracingHarness({ tracing: { maxStreamEvents: 8 } });
    const { bus } = harness;
    const invoke = bus.emit('tool.invoke', { id: 'tc_1', name: 'tokens', arguments: {} });
    for (let sequence = 1; sequence <= 500; sequence += 1) {
      bus.emit(
        'tool.stream.progress',
        { tool_name: 'tokens', tool_id: 'tc_1', turn_id: '', sequence, progress: sequence / 500 },
        { causation: { parentId: invoke.id } },
      );
    }
    bus.emit(
      'tool.result',
      { id: 'tc_1', name: 'tokens', output: '' },
      {
        causation: { parentId: invoke.id },
      },
    );
    const [span] = await harness.spans(1);
    expect(span!.events.length).toBeLessThanOrEqual(8);
    expect(span!.events[0]!.attributes['tooltrace.stream.sequence']).toBe(1);
    expect(span!.events.at(-1)!.attributes['tooltrace.stream.progress']).toBe(1);
    expect(span!.attributes['tooltrace.stream.last_progress']).toBe(1);
  });

  it('ends a failed call with status ERROR, error.type and an exception event', async () => {
    harness = await startTracingHarness();
    const { bus } = harness;
    const invoke = bus.emit(
      'tool.invoke',
      { id: 'tc_1', name: 'fetch', arguments: {} },
      {
        timeUnixNano: at(0),
      },
    );
    bus.emit(
      'tool.result',
      { id: 'tc_1', name: 'fetch', output: '', error: 'connection refused' },
      { causation: { parentId: invoke.id }, timeUnixNano: at(7) },
    );
    const [span] = await harness.spans(1);
    expect(span!.status).toEqual({ code: 2, message: 'connection refused' });
    // No kind of its own: the conventions' fallback value.
    expect(span!.attributes['error.type']).toBe('_OTHER');
    expect(span!.attributes['tooltrace.tool.cancelled']).toBeUndefined();
    expect(span!.events).toEqual([
      {
        name: 'exception',
        timeUnixNano: at(7),
        attributes: { 'exception.type': '_OTHER', 'exception.message': 'connection refused' },
      },
    ]);
  });

  it('takes error.type from the result when it names the kind of error', async () => {
    harness = await startTracingHarness();
    const { bus } = harness;
    const invoke = bus.emit('tool.invoke', { id: 'tc_1', name: 'fetch', arguments: {} });
    bus.emit(
      'tool.result',
      { id: 'tc_1', name: 'fetch', output: '', error: 'timed out', errorType: 'TimeoutError' },
      { causation: { parentId: invoke.id } },
    );
    const [span] = await harness.spans(1);
    expect(span!.attributes['error.type']).toBe('TimeoutError');
    expect(span!.events[0]!.attributes['exception.type']).toBe('TimeoutError');
  });

  it('marks a cancelled call so a query can tell it from a failure', async () => {
    harness = await startTracingHarness();
    const { bus } = harness;
    const invoke = bus.emit('tool.invoke', { id: 'tc_1', name: 'crawl', arguments: {} });
    bus.emit(
      'tool.result',
      { id: 'tc_1', name: 'crawl', output: '', error: 'user pressed stop', cancelled: true },
      { causation: { parentId: invoke.id } },
    );
    const [span] = await harness.spans(1);
    expect(span!.status).toEqual({ code: 2, message: 'user pressed stop' });
    expect(span!.attributes).toMatchObject({
      'error.type': 'cancelled',
      'tooltrace.tool.cancelled': true,
    });
    expect(span!.events.map((event) => event.attributes['exception.type'])).toEqual(['cancelled']);
  });

  it('traces calls run by bridge (streaming and request-response tools) the same way', async () => {
    harness = await startTracingHarness();
    const { bus } = harness;
    const streaming: ChannelTool = {
      name: 'writer',
      async *stream(): AsyncGenerator<ToolEvent> {
        yield { kind: 'progress', progress: 0.1, payload: 'outline' };
        await new Promise((resolve) => setImmediate(resolve));
        yield { kind: 'partial', payload: 'Once ' };
        yield { kind: 'partial', payload: 'upon a time' };
        yield { kind: 'complete', payload: 'Once upon a time' };
      },
    };
    const writer = new StreamingToolPlugin('writer', () => streaming);
    const clock = new StreamingToolPlugin('clock', () => ({
      name: 'clock',
      execute: () => Promise.resolve('12:00'),
    }));
    const broken = new StreamingToolPlugin('broken', () => ({
      name: 'broken',
      execute: () => Promise.reject(new Error('disk full')),
    }));
    writer.attach(bus);
    clock.attach(bus);
    broken.attach(bus);
    bus.emit('tool.invoke', { id: 'tc_w', name: 'writer', arguments: {} });
    bus.emit('tool.invoke', { id: 'tc_c', name: 'clock', arguments: {} });
    bus.emit('tool.invoke', { id: 'tc_b', name: 'broken', arguments: {} });
    await expect.poll(() => harness!.tracing.stats().openSpans).toBe(0);
    await Promise.all([writer.shutdown(), clock.shutdown(), broken.shutdown()]);

    const spans = await harness.spans(3);
    const written = spanOfCall(spans, 'tc_w');
    expect(written.status).toEqual({ code: 1, message: '' });
    expect(written.events.map((event) => event.name)).toEqual([
      'tool.stream.progress',
      'tool.stream.partial',
      'tool.stream.partial',
    ]);
    expect(written.attributes['tooltrace.stream.partial.bytes']).toBe(16);
    expect(written.startTimeUnixNano).toBeLessThan(written.events[0]!.timeUnixNano);
    expect(written.endTimeUnixNano).toBeGreaterThan(written.events[2]!.timeUnixNano);
    const clocked = spanOfCall(spans, 'tc_c');
    expect(clocked.status.code).toBe(1);
    expect(clocked.events).toEqual([]);
    expect(clocked.attributes['tooltrace.stream.partial.count']).toBe(0);
    const failed = spanOfCall(spans, 'tc_b');
    expect(failed.status).toEqual({ code: 2, message: 'disk full' });
    expect(harness.tracing.stats()).toMatchObject({ openSpans: 0, spansStarted: 3 });
  });
});
