import { afterEach, describe, expect, it } from 'vitest';
import { StreamingToolPlugin, ToolChannel } from '../../src/streamtool/index.js';
import { at, spanOfCall, startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('traceToolCalls()', () => {
  describe('span attributes a call carries', () => {
    it('puts the attributes of the invoke on the span at its start and those of the result at its end', async () => {
      harness = await startTracingHarness();
      const { bus } = harness;
      const invoke = bus.emit(
        'tool.invoke',
        {
          id: 'tc_1',
          name: 'search',
          arguments: {},
          attributes: { 'mcp.method.name': 'tools/call', 'network.transport': 'pipe' },
        },
        { timeUnixNano: at(0) },
      );
      bus.emit(
        'tool.result',
        {
          id: 'tc_1',
          name: 'search',
          output: 'ok',
          attributes: {
            'jsonrpc.request.id': '4',
            'gen_ai.tool.description': 'Searches',
            n: [1, 2],
          },
        },
        { timeUnixNano: at(5), causation: { parentId: invoke.id } },
      );
      const span = spanOfCall(await harness.spans(1), 'tc_1');
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'network.transport': 'pipe',
        'jsonrpc.request.id': '4',
        'gen_ai.tool.description': 'Searches',
        n: [1, 2],
      });
      expect(span.status.code).toBe(1);
    });

    it('never lets a call attribute replace the call identity, its outcome or tooltrace.*', async () => {
      harness = await startTracingHarness();
      const { bus } = harness;
      const forged = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.tool.name': 'other',
        'gen_ai.tool.call.id': 'tc_9',
        'error.type': 'forged',
        'tooltrace.end_reason': 'forged',
      };
      const invoke = bus.emit('tool.invoke', {
        id: 'tc_1',
        name: 'search',
        arguments: {},
        attributes: forged,
      });
      bus.emit(
        'tool.result',
        { id: 'tc_1', name: 'search', output: '', error: 'nope', attributes: forged },
        { causation: { parentId: invoke.id } },
      );
      const span = spanOfCall(await harness.spans(1), 'tc_1');
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'search',
        'gen_ai.tool.call.id': 'tc_1',
        'error.type': '_OTHER',
        'tooltrace.end_reason': 'result',
      });
    });

    it("records a failed result's errorType as error.type and on its exception event", async () => {
      harness = await startTracingHarness();
      const { bus } = harness;
      const invoke = bus.emit('tool.invoke', { id: 'tc_1', name: 'search', arguments: {} });
      bus.emit(
        'tool.result',
        { id: 'tc_1', name: 'search', output: '', error: 'no such page', errorType: 'tool_error' },
        { causation: { parentId: invoke.id } },
      );
      const span = spanOfCall(await harness.spans(1), 'tc_1');
      expect(span.status).toEqual({ code: 2, message: 'no such page' });
      expect(span.attributes['error.type']).toBe('tool_error');
      expect(span.events.find((event) => event.name === 'exception')?.attributes).toMatchObject({
        'exception.type': 'tool_error',
        'exception.message': 'no such page',
      });
    });

    it('leaves out values an attribute cannot hold and keeps the rest', async () => {
      harness = await startTracingHarness();
      const { bus } = harness;
      const invoke = bus.emit('tool.invoke', { id: 'tc_1', name: 'search', arguments: {} });
      bus.emit(
        'tool.result',
        {
          id: 'tc_1',
          name: 'search',
          output: 'ok',
          attributes: { kept: true, nested: { a: 1 }, missing: null, infinite: Infinity },
        },
        { causation: { parentId: invoke.id } },
      );
      const span = spanOfCall(await harness.spans(1), 'tc_1');
      expect(span.attributes.kept).toBe(true);
      for (const key of ['nested', 'missing', 'infinite'])
        expect(span.attributes).not.toHaveProperty(key);
    });
  });

  describe('attributes of a stream event', () => {
    it("puts a progress or partial event's attributes on its span event, without content capture, the tracer's own kept", async () => {
      harness = await startTracingHarness();
      const channel = new ToolChannel();
      void channel.progress(-1, 'secret note', {
        attributes: { phase: 'fetch', 'tooltrace.stream.sequence': 99 },
      });
      void channel.partial('chunk', { attributes: { phase: 'parse' } });
      void channel.complete('done');

      new StreamingToolPlugin('load', () => ({ name: 'load', stream: () => channel })).attach(
        harness.bus,
      );

      const ended = new Promise((resolve) => harness!.bus.subscribe('tool.result', resolve));

      harness.bus.emit('tool.invoke', { id: 'tc_1', name: 'load', arguments: {} });
      await ended;

      const span = spanOfCall(await harness.spans(1), 'tc_1');
      const [progress, partial] = span.events;
      expect(progress?.name).toBe('tool.stream.progress');
      expect(progress?.attributes).toEqual({ phase: 'fetch', 'tooltrace.stream.sequence': 1 });
      expect(partial?.name).toBe('tool.stream.partial');
      expect(partial?.attributes).toMatchObject({ phase: 'parse', 'tooltrace.stream.sequence': 2 });
      // On the span too, as any event's attributes: the last value wins.
      expect(span.attributes.phase).toBe('parse');
    });
  });
});
