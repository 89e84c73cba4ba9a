import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  CORE_ERROR,
  EventBus,
  MalformedToolEventError,
  TOOL_RESULT,
  bridge,
  type BusEvent,
  type ChannelTool,
  type CoreErrorPayload,
  type ToolCall,
  type ToolEvent,
  type ToolResult,
} from '../../src/index.js';

const CALL: ToolCall = { id: 'tc_1', name: 'fetch', arguments: {} };

function record<T>(bus: EventBus, type: string): BusEvent<T>[] {
  const seen: BusEvent<T>[] = [];
  bus.subscribe<T>(type, (event) => void seen.push(event));
  return seen;
}

function toolOf(events: unknown[]): ChannelTool {
  return {
    name: 'fetch',
    async *stream() {
      for (const event of events) {
        await nextTurn();
        yield event as ToolEvent;
      }
    },
  };
}

describe('bridge()', () => {
  describe('span attributes and error types', () => {
    it('gathers the attributes of every event onto the tool.result, a later value winning', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      await bridge(
        bus,
        toolOf([
          { kind: 'progress', attributes: { 'jsonrpc.request.id': '7', 'http.retries': 0 } },
          { kind: 'partial', payload: 'a', attributes: { 'http.retries': 2, tags: ['x', 'y'] } },
          { kind: 'complete', payload: 'done', attributes: { 'cache.hit': false } },
        ]),
        CALL,
      );
      expect(results.map((event) => event.payload)).toEqual([
        {
          id: 'tc_1',
          name: 'fetch',
          output: 'done',
          attributes: {
            'jsonrpc.request.id': '7',
            'http.retries': 2,
            tags: ['x', 'y'],
            'cache.hit': false,
          },
        },
      ]);
    });

    it('carries the errorType of an error event and the attributes gathered before it', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const failing = bridge(
        bus,
        toolOf([
          { kind: 'progress', attributes: { 'mcp.method.name': 'tools/call' } },
          { kind: 'error', error: new Error('quota exceeded'), errorType: 'tool_error' },
        ]),
        CALL,
      );
      await expect(failing).rejects.toThrow('quota exceeded');
      expect(results[0]!.payload).toEqual({
        id: 'tc_1',
        name: 'fetch',
        output: '',
        error: 'quota exceeded',
        errorType: 'tool_error',
        attributes: { 'mcp.method.name': 'tools/call' },
      });
    });

    it('keeps the attributes gathered so far on the result of a cancelled call', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const controller = new AbortController();
      const stuck: ChannelTool = {
        name: 'fetch',
        async *stream(signal) {
          yield { kind: 'progress', attributes: { 'jsonrpc.request.id': '3' } };
          controller.abort(new Error('user pressed stop'));
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
        },
      };
      await expect(bridge(bus, stuck, CALL, { signal: controller.signal })).rejects.toThrow(
        'user pressed stop',
      );
      expect(results[0]!.payload).toMatchObject({
        cancelled: true,
        attributes: { 'jsonrpc.request.id': '3' },
      });
    });

    it('reports each attribute an attribute cannot hold as core.error, keeps the rest and the event', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const errors = record<CoreErrorPayload>(bus, CORE_ERROR);
      await bridge(
        bus,
        toolOf([
          {
            kind: 'complete',
            payload: 'ok',
            attributes: { good: 'yes', nested: { a: 1 }, mixed: [1, 'a'], nan: Number.NaN },
          },
        ]),
        CALL,
      );
      expect(results[0]!.payload).toMatchObject({ output: 'ok', attributes: { good: 'yes' } });
      expect(Object.keys(results[0]!.payload.attributes ?? {})).toEqual(['good']);
      const reported = errors.map((event) => event.payload.error);
      for (const error of reported) expect(error).toBeInstanceOf(MalformedToolEventError);
      expect(reported.map((error) => (error as MalformedToolEventError).field)).toEqual([
        'attributes.nested',
        'attributes.mixed',
        'attributes.nan',
      ]);
      expect(errors[0]!.payload.message).toBe(
        'tool "fetch" (call tc_1) yielded a malformed event, attribute left out: attributes.nested ' +
          'must be a string, a finite number, a boolean or an array of one of those, got an object',
      );
    });

    it('reports an errorType that is not a non-empty string and still fails the call', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const errors = record<CoreErrorPayload>(bus, CORE_ERROR);
      await expect(
        bridge(bus, toolOf([{ kind: 'error', error: new Error('boom'), errorType: 42 }]), CALL),
      ).rejects.toThrow('boom');
      expect(results[0]!.payload).toEqual({ id: 'tc_1', name: 'fetch', output: '', error: 'boom' });
      expect(errors.map((event) => event.payload.message)).toEqual([
        'tool "fetch" (call tc_1) yielded a malformed event, errorType left out: errorType must be a non-empty string, got 42',
      ]);
    });
  });
});
