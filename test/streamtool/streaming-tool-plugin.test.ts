import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  BEFORE_TOOL_RESULT,
  CORE_ERROR,
  declareAnsweredTools,
  EventBus,
  PluginStateError,
  StreamingToolPlugin,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  ToolCancelledError,
  type BusEvent,
  type ChannelTool,
  type CoreErrorPayload,
  type RequestResponseTool,
  type ToolCall,
  type ToolEvent,
  type ToolResult,
} from '../../src/index.js';

function record<T = unknown>(bus: EventBus, type: string): BusEvent<T>[] {
  const seen: BusEvent<T>[] = [];
  bus.subscribe<T>(type, (event) => void seen.push(event));
  return seen;
}

function call(id: string, name = 'search'): ToolCall {
  return { id, name, arguments: { query: id } };
}

/** A streaming tool: a partial echoing the query, then the completion. */
const echoTool: ChannelTool = {
  name: 'search',
  async *stream(_signal, input) {
    await nextTurn();
    yield { kind: 'partial', payload: `hit for ${String(input.query)}` };
    yield { kind: 'complete', payload: `done ${String(input.query)}` };
  },
};

/** A streaming tool that waits until its signal aborts, then still takes a turn to stop. */
const waitingTool: ChannelTool = {
  name: 'search',
  async *stream(signal) {
    yield { kind: 'progress', progress: -1 };
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    yield { kind: 'partial', payload: 'never seen' };
  },
};

describe('StreamingToolPlugin', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  describe('attach()', () => {
    it('answers tool.invoke for its tool with the stream and one result, all children of the invoke', async () => {
      const bus = new EventBus();
      const plugin = new StreamingToolPlugin('search', () => echoTool);
      plugin.attach(bus);
      const emitted: BusEvent[] = [];
      bus.subscribeAll((event) => void (event.type !== TOOL_INVOKE && emitted.push(event)));
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const invoke = bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(results).toHaveLength(1));
      expect(emitted.map((event) => event.type)).toEqual([
        TOOL_STREAM_PARTIAL,
        BEFORE_TOOL_RESULT,
        TOOL_RESULT,
      ]);
      expect(results[0]!.payload).toEqual({ id: 'tc_1', name: 'search', output: 'done tc_1' });
      for (const event of emitted) {
        expect(event.causation.parentId).toBe(invoke.id);
        expect(event.source).toBe('streamtool.search');
      }
    });

    it('leaves calls for other tools to whoever declared them', async () => {
      const bus = new EventBus();
      const factory = vi.fn(() => echoTool);
      new StreamingToolPlugin('search', factory).attach(bus);
      declareAnsweredTools(bus, ['read_file']);
      const results = record(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1', 'read_file'));
      await nextTurn();
      await nextTurn();
      expect(factory).not.toHaveBeenCalled();
      expect(results).toHaveLength(0);
    });

    it('makes a tool per call and runs calls side by side', async () => {
      const bus = new EventBus();
      const made: string[] = [];
      const plugin = new StreamingToolPlugin('search', (toolCall) => {
        made.push(toolCall.id);
        return echoTool;
      });
      plugin.attach(bus);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      bus.emit(TOOL_INVOKE, call('tc_2'));
      expect(plugin.running).toBe(2);
      await vi.waitFor(() => expect(results).toHaveLength(2));
      expect(made).toEqual(['tc_1', 'tc_2']);
      expect(results.map((event) => event.payload.output).sort()).toEqual([
        'done tc_1',
        'done tc_2',
      ]);
      await vi.waitFor(() => expect(plugin.running).toBe(0));
    });

    it('runs the call in the background: the tool.invoke dispatch finishes before anything is emitted', async () => {
      const bus = new EventBus();
      const order: string[] = [];
      new StreamingToolPlugin('search', () => ({
        name: 'search',
        stream() {
          throw new Error('fails as soon as it starts');
        },
      })).attach(bus);
      bus.subscribe(TOOL_INVOKE, () => void order.push('later invoke handler'));
      bus.subscribe(TOOL_RESULT, () => void order.push('tool.result'));
      bus.emit(TOOL_INVOKE, call('tc_1'));
      order.push('emit returned');
      await vi.waitFor(() => expect(order).toContain('tool.result'));
      expect(order).toEqual(['later invoke handler', 'emit returned', 'tool.result']);
    });

    it('never lets a failing call become an unhandled rejection', async () => {
      const bus = new EventBus();
      const plugin = new StreamingToolPlugin('search', () => ({
        name: 'search',
        async *stream() {
          await nextTurn();
          yield { kind: 'error', error: new Error('index offline') } satisfies ToolEvent;
        },
      }));
      plugin.attach(bus);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(results).toHaveLength(1));
      await nextTurn();
      await nextTurn();
      expect(results[0]!.payload.error).toBe('index offline');
      expect(unhandled).toEqual([]);
    });

    it('answers with an error result when the factory throws', async () => {
      const bus = new EventBus();
      new StreamingToolPlugin('search', () => {
        throw new Error('no API key');
      }).attach(bus);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(results).toHaveLength(1));
      expect(results[0]!.payload).toEqual({
        id: 'tc_1',
        name: 'search',
        output: '',
        error: 'no API key',
      });
    });

    it('answers with an error result when the factory returns neither kind of tool', async () => {
      const bus = new EventBus();
      new StreamingToolPlugin(
        'search',
        () => ({ name: 'search' }) as unknown as ChannelTool,
      ).attach(bus);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(results).toHaveLength(1));
      expect(results[0]!.payload.error).toMatch(
        /must return a ChannelTool \(stream\) or a RequestResponseTool/,
      );
    });

    it('reports a tool.invoke without a call id as core.error from the plugin', () => {
      const bus = new EventBus();
      new StreamingToolPlugin('search', () => echoTool, { source: 'plugin.search' }).attach(bus);
      const errors = record<CoreErrorPayload>(bus, CORE_ERROR);
      const invoke = bus.emit(TOOL_INVOKE, { name: 'search', arguments: {} });
      expect(errors.map((event) => event.payload)).toMatchObject([
        {
          message: 'tool.invoke for "search" has no call id (payload.id)',
          eventId: invoke.id,
          source: 'plugin.search',
        },
      ]);
    });

    it('throws PluginStateError when attached twice', () => {
      const plugin = new StreamingToolPlugin('search', () => echoTool);
      plugin.attach(new EventBus());
      expect(() => plugin.attach(new EventBus())).toThrow(PluginStateError);
      expect(() => plugin.attach(new EventBus())).toThrow(
        'plugin for tool "search" is already attached',
      );
    });

    it('rejects a missing tool name or factory', () => {
      expect(() => new StreamingToolPlugin('', () => echoTool)).toThrow(
        'toolName must be a non-empty string',
      );
      expect(
        () => new StreamingToolPlugin('search', undefined as unknown as () => ChannelTool),
      ).toThrow('createTool must be a function');
    });
  });

  describe('emissions', () => {
    it('declares the stream events, before:tool.result and tool.result', () => {
      const plugin = new StreamingToolPlugin('search', () => echoTool);
      expect(plugin.emissions).toEqual([
        TOOL_STREAM_PROGRESS,
        TOOL_STREAM_PARTIAL,
        BEFORE_TOOL_RESULT,
        TOOL_RESULT,
      ]);
      expect(Object.isFrozen(plugin.emissions)).toBe(true);
    });
  });

  describe('request-response tools', () => {
    it('answers a plain tool with just tool.result, after before:tool.result', async () => {
      const bus = new EventBus();
      const plainTool: RequestResponseTool = {
        name: 'search',
        async execute(input) {
          await nextTurn();
          return { hits: [input.query] };
        },
      };
      new StreamingToolPlugin('search', () => plainTool).attach(bus);
      const types: string[] = [];
      bus.subscribeAll((event) => void types.push(event.type));
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const invoke = bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(results).toHaveLength(1));
      expect(types).toEqual([TOOL_INVOKE, BEFORE_TOOL_RESULT, TOOL_RESULT]);
      expect(results[0]!.payload).toEqual({
        id: 'tc_1',
        name: 'search',
        output: '{"hits":["tc_1"]}',
      });
      expect(results[0]!.causation.parentId).toBe(invoke.id);
    });

    it('passes the input and an abort signal to execute() and reports what it throws', async () => {
      const bus = new EventBus();
      const seen: unknown[] = [];
      const plainTool: RequestResponseTool = {
        name: 'search',
        execute(input, signal) {
          seen.push(input, signal instanceof AbortSignal);
          throw new Error('rate limited');
        },
      };
      new StreamingToolPlugin('search', () => plainTool).attach(bus);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(results).toHaveLength(1));
      expect(seen).toEqual([{ query: 'tc_1' }, true]);
      expect(results[0]!.payload.error).toBe('rate limited');
      expect(unhandled).toEqual([]);
    });

    it('takes a synchronous string output as it is', async () => {
      const bus = new EventBus();
      new StreamingToolPlugin('search', () => ({
        name: 'search',
        execute: () => 'plain text',
      })).attach(bus);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(results).toHaveLength(1));
      expect(results[0]!.payload.output).toBe('plain text');
    });
  });

  describe('shutdown()', () => {
    it('aborts every running call and resolves once each has emitted its cancelled result', async () => {
      const bus = new EventBus();
      const plugin = new StreamingToolPlugin('search', () => waitingTool);
      plugin.attach(bus);
      const progress = record(bus, TOOL_STREAM_PROGRESS);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      bus.emit(TOOL_INVOKE, call('tc_2'));
      await vi.waitFor(() => expect(progress).toHaveLength(2));
      expect(plugin.running).toBe(2);

      await plugin.shutdown();
      expect(plugin.running).toBe(0);
      expect(
        results
          .map((event) => event.payload)
          .sort((left, right) => left.id.localeCompare(right.id)),
      ).toEqual([
        {
          id: 'tc_1',
          name: 'search',
          output: '',
          error: 'tool "search" was cancelled: its plugin shut down',
          cancelled: true,
        },
        {
          id: 'tc_2',
          name: 'search',
          output: '',
          error: 'tool "search" was cancelled: its plugin shut down',
          cancelled: true,
        },
      ]);
      expect(unhandled).toEqual([]);
    });

    it('aborts the signal the tool was given, with a ToolCancelledError as the reason', async () => {
      const bus = new EventBus();
      let toolSignal: AbortSignal | undefined;
      const plugin = new StreamingToolPlugin('search', () => ({
        name: 'search',
        async *stream(signal) {
          toolSignal = signal;
          yield { kind: 'progress', progress: 0 } satisfies ToolEvent;
          await new Promise(() => {});
        },
      }));
      plugin.attach(bus);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await vi.waitFor(() => expect(toolSignal).toBeDefined());
      await plugin.shutdown();
      expect(toolSignal!.aborted).toBe(true);
      expect(toolSignal!.reason).toBeInstanceOf(ToolCancelledError);
    });

    it('is idempotent: a second call returns the same promise and emits nothing more', async () => {
      const bus = new EventBus();
      const plugin = new StreamingToolPlugin('search', () => waitingTool);
      plugin.attach(bus);
      const results = record(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await nextTurn();
      const first = plugin.shutdown();
      const second = plugin.shutdown();
      expect(second).toBe(first);
      await first;
      await plugin.shutdown();
      expect(results).toHaveLength(1);
    });

    it('stops answering tool.invoke and refuses to be attached again', async () => {
      const bus = new EventBus();
      const factory = vi.fn(() => echoTool);
      const plugin = new StreamingToolPlugin('search', factory);
      plugin.attach(bus);
      await plugin.shutdown();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.emit(TOOL_INVOKE, call('tc_1'));
      await nextTurn();
      await nextTurn();
      expect(factory).not.toHaveBeenCalled();
      // Nothing answers "search" any more: the call fails as a call for an unknown tool.
      expect(results.map((event) => event.payload.errorType)).toEqual(['unknown_tool']);
      expect(() => plugin.attach(bus)).toThrow(PluginStateError);
    });

    it('resolves at once when nothing is running, also before attach()', async () => {
      const plugin = new StreamingToolPlugin('search', () => echoTool);
      await expect(plugin.shutdown()).resolves.toBeUndefined();
    });
  });
});
