import { describe, expect, it, vi } from 'vitest';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import {
  BEFORE_TOOL_RESULT,
  CORE_ERROR,
  EventBus,
  MalformedToolEventError,
  SequenceOrderError,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  ToolStreamError,
  TooltraceError,
  bridge,
  type BusEvent,
  type ChannelTool,
  type CoreErrorPayload,
  type ToolCall,
  type ToolEvent,
  type ToolResult,
  type VetoablePayload,
} from '../../src/index.js';

const CALL: ToolCall = { id: 'tc_1', name: 'search', arguments: { query: 'otel' }, turnId: 't1' };

function record<T = unknown>(bus: EventBus, type: string): BusEvent<T>[] {
  const seen: BusEvent<T>[] = [];
  bus.subscribe<T>(type, (event) => void seen.push(event));
  return seen;
}

/** A tool whose stream is the given events, yielded one per turn of the event loop. */
function toolOf(events: unknown[], name = 'search'): ChannelTool {
  return {
    name,
    async *stream() {
      for (const event of events) {
        await nextTurn();
        yield event as ToolEvent;
      }
    },
  };
}

/** Everything bridge emits, in order, as `type` or `type:sequence` strings. */
function trace(bus: EventBus): string[] {
  const seen: string[] = [];
  bus.subscribeAll((event) => {
    const payload = event.payload as { sequence?: unknown } | null;
    const sequence = event.type.startsWith('tool.stream.') ? `:${String(payload?.sequence)}` : '';
    seen.push(`${event.type}${sequence}`);
  });
  return seen;
}

/** A promise that never settles: a tool stuck on something that never answers. */
function forever(): Promise<never> {
  return new Promise<never>(() => {});
}

describe('bridge()', () => {
  describe('projection', () => {
    it('projects a progress event as tool.stream.progress with the seed payload keys', async () => {
      const bus = new EventBus();
      const progress = record(bus, TOOL_STREAM_PROGRESS);
      await bridge(
        bus,
        toolOf([{ kind: 'progress', progress: 0.25, payload: 'a quarter' }, { kind: 'complete' }]),
        CALL,
      );
      expect(progress.map((event) => event.payload)).toEqual([
        {
          tool_name: 'search',
          tool_id: 'tc_1',
          turn_id: 't1',
          sequence: 1,
          progress: 0.25,
          payload: 'a quarter',
        },
      ]);
    });

    it('projects a partial event as tool.stream.partial with the seed payload keys', async () => {
      const bus = new EventBus();
      const partials = record(bus, TOOL_STREAM_PARTIAL);
      await bridge(
        bus,
        toolOf([{ kind: 'partial', payload: { chunk: 'he' } }, { kind: 'complete' }]),
        CALL,
      );
      expect(partials.map((event) => event.payload)).toEqual([
        {
          tool_name: 'search',
          tool_id: 'tc_1',
          turn_id: 't1',
          sequence: 1,
          payload: { chunk: 'he' },
        },
      ]);
    });

    it('reports an unknown fraction as -1 when a progress event leaves it out', async () => {
      const bus = new EventBus();
      const progress = record<{ progress: number }>(bus, TOOL_STREAM_PROGRESS);
      await bridge(
        bus,
        toolOf([{ kind: 'progress' }, { kind: 'progress', progress: -1 }, { kind: 'complete' }]),
        CALL,
      );
      expect(progress.map((event) => event.payload.progress)).toEqual([-1, -1]);
    });

    it('names the stream after the tool and the result after the call, with an empty turn when there is none', async () => {
      const bus = new EventBus();
      const partials = record<{ tool_name: string; turn_id: string }>(bus, TOOL_STREAM_PARTIAL);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const call: ToolCall = { id: 'tc_9', name: 'search-alias', arguments: {} };
      await bridge(
        bus,
        toolOf([{ kind: 'partial', payload: 'x' }, { kind: 'complete' }], 'search'),
        call,
      );
      expect(partials[0]!.payload).toMatchObject({ tool_name: 'search', turn_id: '' });
      expect(results[0]!.payload).toEqual({ id: 'tc_9', name: 'search-alias', output: '' });
    });

    it('passes the call arguments and the signal to stream()', async () => {
      const bus = new EventBus();
      const controller = new AbortController();
      const seen: unknown[] = [];
      const tool: ChannelTool = {
        name: 'search',
        async *stream(signal, input) {
          seen.push(signal, input);
          await nextTurn();
          yield { kind: 'complete' };
        },
      };
      await bridge(bus, tool, CALL, { signal: controller.signal });
      expect(seen).toEqual([controller.signal, { query: 'otel' }]);
    });

    it('stamps every event it emits with the given source', async () => {
      const bus = new EventBus();
      const sources: (string | undefined)[] = [];
      bus.subscribeAll((event) => void sources.push(event.source));
      await bridge(bus, toolOf([{ kind: 'partial', payload: 1 }, { kind: 'complete' }]), CALL, {
        source: 'plugin.search',
      });
      expect(sources).toEqual(['plugin.search', 'plugin.search', 'plugin.search']);
    });

    it('never emits from within the call to bridge itself', async () => {
      const bus = new EventBus();
      const seen = trace(bus);
      const tool: ChannelTool = {
        name: 'search',
        stream() {
          throw new Error('fails at once');
        },
      };
      const running = bridge(bus, tool, CALL);
      expect(seen).toEqual([]);
      await expect(running).rejects.toThrow('fails at once');
      expect(seen).toEqual([BEFORE_TOOL_RESULT, TOOL_RESULT]);
    });
  });

  describe('tool.result', () => {
    it('emits one tool.result whose output is a string payload as it is, and resolves', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      await expect(
        bridge(bus, toolOf([{ kind: 'complete', payload: 'all done' }]), CALL),
      ).resolves.toBeUndefined();
      expect(results.map((event) => event.payload)).toEqual([
        { id: 'tc_1', name: 'search', output: 'all done', turnId: 't1' },
      ]);
    });

    it.each([
      ['an object', { hits: [1, 2] }, '{"hits":[1,2]}'],
      ['a number', 42, '42'],
      ['nothing', undefined, ''],
      ['null', null, ''],
    ])('turns %s into its JSON output', async (_name, payload, output) => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      await bridge(bus, toolOf([{ kind: 'complete', payload }]), CALL);
      expect(results.map((event) => event.payload.output)).toEqual([output]);
    });

    it('falls back to an inspected form for a payload JSON cannot encode', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const cyclic: Record<string, unknown> = { name: 'loop' };
      cyclic.self = cyclic;
      await bridge(bus, toolOf([{ kind: 'complete', payload: cyclic }]), CALL);
      expect(results[0]!.payload.output).toContain("name: 'loop'");
    });

    it('emits a tool.result with the error message on an error event and rejects with that error', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const failure = new Error('index offline');
      await expect(
        bridge(
          bus,
          toolOf([
            { kind: 'partial', payload: 'a' },
            { kind: 'error', error: failure },
          ]),
          CALL,
        ),
      ).rejects.toBe(failure);
      expect(results.map((event) => event.payload)).toEqual([
        { id: 'tc_1', name: 'search', output: '', error: 'index offline', turnId: 't1' },
      ]);
    });

    it.each([
      ['no error', undefined, 'tool "search" reported an error event without an error'],
      ['a string', 'quota exceeded', 'quota exceeded'],
    ])(
      'rejects with a ToolStreamError when an error event carries %s',
      async (_name, error, message) => {
        const bus = new EventBus();
        const results = record<ToolResult>(bus, TOOL_RESULT);
        const running = bridge(bus, toolOf([{ kind: 'error', error }]), CALL);
        await expect(running).rejects.toThrow(ToolStreamError);
        await expect(running).rejects.toThrow(message);
        expect(results.map((event) => event.payload.error)).toEqual([message]);
      },
    );

    it('emits the vetoable before:tool.result with the result just before tool.result', async () => {
      const bus = new EventBus();
      const seen = trace(bus);
      const before = record<VetoablePayload<ToolResult>>(bus, BEFORE_TOOL_RESULT);
      await bridge(
        bus,
        toolOf([
          { kind: 'partial', payload: 'a' },
          { kind: 'complete', payload: 'ab' },
        ]),
        CALL,
      );
      expect(seen).toEqual([`${TOOL_STREAM_PARTIAL}:1`, BEFORE_TOOL_RESULT, TOOL_RESULT]);
      expect(before[0]!.payload.original).toEqual({
        id: 'tc_1',
        name: 'search',
        output: 'ab',
        turnId: 't1',
      });
    });

    it('suppresses tool.result when before:tool.result is vetoed, and still resolves', async () => {
      const bus = new EventBus();
      const results = record(bus, TOOL_RESULT);
      bus.subscribe<VetoablePayload<ToolResult>>(BEFORE_TOOL_RESULT, (event) => {
        event.payload.veto = { vetoed: true, reason: 'held for review' };
      });
      await expect(
        bridge(bus, toolOf([{ kind: 'complete', payload: 'x' }]), CALL),
      ).resolves.toBeUndefined();
      expect(results).toHaveLength(0);
    });

    it('lets a before:tool.result handler amend the result that tool.result carries', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      bus.subscribe<VetoablePayload<ToolResult>>(BEFORE_TOOL_RESULT, (event) => {
        event.payload.original.output = '[redacted]';
      });
      await bridge(bus, toolOf([{ kind: 'complete', payload: 'secret' }]), CALL);
      expect(results[0]!.payload.output).toBe('[redacted]');
    });
  });

  describe('causation', () => {
    it('makes every projected event a child of the tool.invoke whose handler started it', async () => {
      const bus = new EventBus();
      const emitted: BusEvent[] = [];
      bus.subscribeAll((event) => void (event.type !== TOOL_INVOKE && emitted.push(event)));
      let running: Promise<void> | undefined;
      bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => {
        running = bridge(
          bus,
          toolOf([
            { kind: 'progress', progress: 0.5 },
            { kind: 'partial', payload: 'a' },
            { kind: 'complete' },
          ]),
          event.payload,
        );
      });
      const invoke = bus.emit(TOOL_INVOKE, CALL);
      await running;
      expect(emitted.map((event) => event.type)).toEqual([
        TOOL_STREAM_PROGRESS,
        TOOL_STREAM_PARTIAL,
        BEFORE_TOOL_RESULT,
        TOOL_RESULT,
      ]);
      for (const event of emitted) {
        expect(event.causation.parentId).toBe(invoke.id);
        expect(event.causation.parentSeq).toBe(invoke.causation.sequence);
      }
    });

    it.each([
      ['a promise continuation', (start: () => void) => void Promise.resolve().then(start)],
      ['setImmediate', (start: () => void) => void setImmediate(start)],
      ['a timer', (start: () => void) => void setTimeout(start, 5)],
      [
        'an async function after an await',
        (start: () => void) =>
          void (async () => {
            await sleep(1);
            start();
          })(),
      ],
    ])(
      'keeps the tool.invoke as parent, with its session, agent and depth, when the handler starts bridge from %s',
      async (_name, schedule) => {
        const bus = new EventBus();
        const emitted: BusEvent[] = [];
        bus.subscribeAll(
          (event) =>
            void (event.type !== TOOL_INVOKE && event.type !== 'noise' && emitted.push(event)),
        );
        let running: Promise<void> | undefined;
        bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => {
          schedule(() => {
            running = bridge(
              bus,
              toolOf([{ kind: 'partial', payload: 'a' }, { kind: 'complete' }]),
              event.payload,
            );
          });
        });
        const invoke = bus.withCausation({ sessionId: 's1', agentId: 'researcher', depth: 2 }, () =>
          bus.emit(TOOL_INVOKE, CALL),
        );
        // Unrelated events in between must not become the parent.
        bus.emit('noise', null);
        await vi.waitFor(() => expect(running).toBeDefined());
        await running;
        expect(emitted.map((event) => event.type)).toEqual([
          TOOL_STREAM_PARTIAL,
          BEFORE_TOOL_RESULT,
          TOOL_RESULT,
        ]);
        for (const event of emitted) {
          expect(event.causation).toMatchObject({
            parentId: invoke.id,
            parentSeq: invoke.causation.sequence,
            sessionId: 's1',
            agentId: 'researcher',
            depth: 2,
          });
        }
      },
    );

    it('links the cancelled result to the tool.invoke even when the abort comes from elsewhere', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const controller = new AbortController();
      let running: Promise<void> | undefined;
      bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => {
        running = bridge(bus, { name: 'search', stream: forever }, event.payload, {
          signal: controller.signal,
        });
      });
      const invoke = bus.withCausation({ sessionId: 's1' }, () => bus.emit(TOOL_INVOKE, CALL));
      await nextTurn();
      // Aborted from a different event's handler: its frame must not leak into the result.
      bus.subscribe('stop', () => controller.abort(new Error('user pressed stop')));
      bus.emit('stop', null);
      await expect(running).rejects.toThrow('user pressed stop');
      expect(results[0]!.causation).toMatchObject({ parentId: invoke.id, sessionId: 's1' });
    });
  });

  describe('failures', () => {
    it('emits an error result and rejects with the error when stream() throws', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const failure = new Error('no credentials');
      const tool: ChannelTool = {
        name: 'search',
        stream() {
          throw failure;
        },
      };
      await expect(bridge(bus, tool, CALL)).rejects.toBe(failure);
      expect(results.map((event) => event.payload.error)).toEqual(['no credentials']);
    });

    it('emits an error result and rejects with the error when stream() rejects', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const failure = new Error('could not connect');
      const tool: ChannelTool = {
        name: 'search',
        async stream() {
          await nextTurn();
          throw failure;
        },
      };
      await expect(bridge(bus, tool, CALL)).rejects.toBe(failure);
      expect(results.map((event) => event.payload.error)).toEqual(['could not connect']);
    });

    it('accepts a stream() that resolves to the iterable', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const tool: ChannelTool = {
        name: 'search',
        async stream() {
          await nextTurn();
          return toolOf([{ kind: 'complete', payload: 'later' }]).stream(
            new AbortController().signal,
            {},
          );
        },
      };
      await bridge(bus, tool, CALL);
      expect(results.map((event) => event.payload.output)).toEqual(['later']);
    });

    it('emits an error result and rejects with a TypeError when stream() returns no async iterable', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const tool = {
        name: 'search',
        stream: () => [{ kind: 'complete' }],
      } as unknown as ChannelTool;
      await expect(bridge(bus, tool, CALL)).rejects.toThrow(TypeError);
      expect(results.map((event) => event.payload.error)).toEqual([
        'tool "search" stream() did not return an AsyncIterable',
      ]);
    });

    it('delivers what came before, then emits an error result when the iterator throws mid-stream', async () => {
      const bus = new EventBus();
      const seen = trace(bus);
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const failure = new Error('connection reset');
      const tool: ChannelTool = {
        name: 'search',
        async *stream() {
          yield { kind: 'partial', payload: 'a' };
          await nextTurn();
          throw failure;
        },
      };
      await expect(bridge(bus, tool, CALL)).rejects.toBe(failure);
      expect(seen).toEqual([`${TOOL_STREAM_PARTIAL}:1`, BEFORE_TOOL_RESULT, TOOL_RESULT]);
      expect(results[0]!.payload).toMatchObject({ error: 'connection reset', output: '' });
      expect(results[0]!.payload.cancelled).toBeUndefined();
    });

    it('rejects a non-Error thrown value as it is, with its text as the result error', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const tool: ChannelTool = {
        name: 'search',
        stream() {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- tools written in JS do this
          throw 'plain string';
        },
      };
      await expect(bridge(bus, tool, CALL)).rejects.toBe('plain string');
      expect(results[0]!.payload.error).toBe('plain string');
    });

    it('rejects with a TypeError and emits nothing when the call has no id', async () => {
      const bus = new EventBus();
      const seen = trace(bus);
      const call = { name: 'search', arguments: {} } as unknown as ToolCall;
      await expect(bridge(bus, toolOf([]), call)).rejects.toThrow(
        'call.id must be a non-empty string',
      );
      await nextTurn();
      expect(seen).toEqual([]);
    });
  });

  describe('stream end', () => {
    it('completes with the last partial payload when the stream ends without a terminal event', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      await expect(
        bridge(
          bus,
          toolOf([
            { kind: 'partial', payload: 'draft 1' },
            { kind: 'partial', payload: { final: true } },
            { kind: 'progress', progress: 1 },
          ]),
          CALL,
        ),
      ).resolves.toBeUndefined();
      expect(results.map((event) => event.payload)).toEqual([
        { id: 'tc_1', name: 'search', output: '{"final":true}', turnId: 't1' },
      ]);
    });

    it('completes with an empty output when a stream without partials just ends', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      await bridge(bus, toolOf([]), CALL);
      expect(results.map((event) => event.payload.output)).toEqual(['']);
    });

    it('ignores events after the terminal one and closes the generator so its finally runs', async () => {
      const bus = new EventBus();
      const seen = trace(bus);
      let cleanedUp = false;
      const tool: ChannelTool = {
        name: 'search',
        async *stream() {
          try {
            yield { kind: 'complete', payload: 'done' };
            await nextTurn();
            yield { kind: 'partial', payload: 'too late' };
            yield { kind: 'error', error: new Error('too late') };
          } finally {
            cleanedUp = true;
          }
        },
      };
      await bridge(bus, tool, CALL);
      await vi.waitFor(() => expect(cleanedUp).toBe(true));
      await sleep(5);
      expect(seen).toEqual([BEFORE_TOOL_RESULT, TOOL_RESULT]);
    });

    it('reads nothing after the terminal event and calls return() on a hand-written iterator', async () => {
      const bus = new EventBus();
      const results = record(bus, TOOL_RESULT);
      const calls: string[] = [];
      const queue: ToolEvent[] = [
        { kind: 'error', error: new Error('broken') },
        { kind: 'partial', payload: 'after' },
      ];
      const iterator: AsyncIterator<ToolEvent> = {
        next() {
          calls.push('next');
          const value = queue.shift();
          return Promise.resolve(
            value === undefined ? { value: undefined, done: true } : { value, done: false },
          );
        },
        return() {
          calls.push('return');
          return Promise.resolve({ value: undefined, done: true });
        },
      };
      const tool: ChannelTool = {
        name: 'search',
        stream: () => ({ [Symbol.asyncIterator]: () => iterator }),
      };
      await expect(bridge(bus, tool, CALL)).rejects.toThrow('broken');
      expect(calls).toEqual(['next', 'return']);
      expect(results).toHaveLength(1);
    });
  });

  describe('cancellation', () => {
    it('emits a cancelled result and rejects with the abort reason at once, even when the tool never yields', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const controller = new AbortController();
      let returned = false;
      const iterator: AsyncIterator<ToolEvent> = {
        next: forever,
        return() {
          returned = true;
          return Promise.resolve({ value: undefined, done: true });
        },
      };
      const running = bridge(
        bus,
        { name: 'search', stream: () => ({ [Symbol.asyncIterator]: () => iterator }) },
        CALL,
        {
          signal: controller.signal,
        },
      );
      await sleep(5);
      const reason = new Error('took too long');
      controller.abort(reason);
      // Emitted synchronously from abort(): nothing waits for the stuck tool.
      expect(results.map((event) => event.payload)).toEqual([
        {
          id: 'tc_1',
          name: 'search',
          output: '',
          error: 'took too long',
          cancelled: true,
          turnId: 't1',
        },
      ]);
      expect(returned).toBe(true);
      await expect(running).rejects.toBe(reason);
    });

    it('cancels a tool stuck inside stream() before it returned an iterable', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const controller = new AbortController();
      const running = bridge(bus, { name: 'search', stream: forever }, CALL, {
        signal: controller.signal,
      });
      await sleep(5);
      controller.abort(new Error('stop'));
      await expect(running).rejects.toThrow('stop');
      expect(results.map((event) => event.payload.cancelled)).toEqual([true]);
    });

    it('closes a generator that was cancelled while it waited, so its finally runs once it wakes', async () => {
      const bus = new EventBus();
      const controller = new AbortController();
      const seen = trace(bus);
      let wake!: () => void;
      const gate = new Promise<void>((resolve) => (wake = resolve));
      let cleanedUp = false;
      const tool: ChannelTool = {
        name: 'search',
        async *stream() {
          try {
            yield { kind: 'partial', payload: 'first' };
            await gate;
            yield { kind: 'partial', payload: 'second' };
          } finally {
            cleanedUp = true;
          }
        },
      };
      const running = bridge(bus, tool, CALL, { signal: controller.signal });
      await vi.waitFor(() => expect(seen).toContain(`${TOOL_STREAM_PARTIAL}:1`));
      controller.abort(new Error('stop'));
      await expect(running).rejects.toThrow('stop');
      expect(cleanedUp).toBe(false);
      wake();
      await vi.waitFor(() => expect(cleanedUp).toBe(true));
      expect(seen).toEqual([`${TOOL_STREAM_PARTIAL}:1`, BEFORE_TOOL_RESULT, TOOL_RESULT]);
    });

    it('uses the standard abort message when the signal aborts without a reason', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const controller = new AbortController();
      const running = bridge(bus, { name: 'search', stream: forever }, CALL, {
        signal: controller.signal,
      });
      controller.abort();
      await expect(running).rejects.toMatchObject({ name: 'AbortError' });
      expect(results[0]!.payload).toMatchObject({
        error: 'This operation was aborted',
        cancelled: true,
      });
    });

    it('answers an already aborted signal with a cancelled result without starting the tool', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const stream = vi.fn(forever);
      const running = bridge(bus, { name: 'search', stream }, CALL, {
        signal: AbortSignal.abort(new Error('too late')),
      });
      expect(results).toHaveLength(0);
      await expect(running).rejects.toThrow('too late');
      expect(results.map((event) => event.payload.cancelled)).toEqual([true]);
      expect(stream).not.toHaveBeenCalled();
    });

    it('ignores an abort after the call completed', async () => {
      const bus = new EventBus();
      const results = record<ToolResult>(bus, TOOL_RESULT);
      const controller = new AbortController();
      await bridge(bus, toolOf([{ kind: 'complete', payload: 'ok' }]), CALL, {
        signal: controller.signal,
      });
      controller.abort(new Error('late'));
      expect(results.map((event) => event.payload)).toEqual([
        { id: 'tc_1', name: 'search', output: 'ok', turnId: 't1' },
      ]);
    });

    it('does not wait for a timer the tool is sleeping on', async () => {
      vi.useFakeTimers();
      try {
        const bus = new EventBus();
        const results = record<ToolResult>(bus, TOOL_RESULT);
        const controller = new AbortController();
        const tool: ChannelTool = {
          name: 'search',
          async *stream() {
            // A one-hour backoff that ignores the signal: bridge must not wait for it.
            await new Promise((resolve) => setTimeout(resolve, 3_600_000));
            yield { kind: 'complete' };
          },
        };
        const running = bridge(bus, tool, CALL, { signal: controller.signal });
        await vi.advanceTimersByTimeAsync(30_000);
        controller.abort(new Error('deadline exceeded'));
        await expect(running).rejects.toThrow('deadline exceeded');
        expect(results.map((event) => event.payload.error)).toEqual(['deadline exceeded']);
        await vi.advanceTimersByTimeAsync(3_600_000);
        expect(results).toHaveLength(1);
      } finally {
        vi.useRealTimers();
      }
    });
  });

  describe('malformed events', () => {
    it.each([
      ['an unknown kind', { kind: 'chunk', payload: 'x' }, 'kind', 'chunk'],
      ['a progress above 1', { kind: 'progress', progress: 1.5 }, 'progress', 1.5],
      ['a negative progress other than -1', { kind: 'progress', progress: -0.5 }, 'progress', -0.5],
      [
        'a progress that is not a number',
        { kind: 'progress', progress: Number.NaN },
        'progress',
        Number.NaN,
      ],
      ['a fractional sequence', { kind: 'partial', sequence: 1.5, payload: 'x' }, 'sequence', 1.5],
      ['a sequence below 1', { kind: 'partial', sequence: 0, payload: 'x' }, 'sequence', 0],
      ['no object at all', 'partial', 'event', 'partial'],
    ])(
      'reports %s as core.error naming the field, skips it and carries on',
      async (_name, bad, field, value) => {
        const bus = new EventBus();
        const errors = record<CoreErrorPayload>(bus, CORE_ERROR);
        const partials = record<{ sequence: number; payload: unknown }>(bus, TOOL_STREAM_PARTIAL);
        const progress = record(bus, TOOL_STREAM_PROGRESS);
        const results = record<ToolResult>(bus, TOOL_RESULT);
        let running: Promise<void> | undefined;
        bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => {
          running = bridge(
            bus,
            toolOf([
              bad,
              { kind: 'partial', payload: 'good' },
              { kind: 'complete', payload: 'end' },
            ]),
            event.payload,
            {
              source: 'plugin.search',
            },
          );
        });
        const invoke = bus.emit(TOOL_INVOKE, CALL);
        await expect(running).resolves.toBeUndefined();

        expect(errors).toHaveLength(1);
        const report = errors[0]!;
        expect(report.payload.error).toBeInstanceOf(MalformedToolEventError);
        expect(report.payload.error).toBeInstanceOf(TooltraceError);
        expect(report.payload.error).toMatchObject({ field, toolName: 'search', callId: 'tc_1' });
        expect((report.payload.error as MalformedToolEventError).value).toEqual(value);
        expect(report.payload.message).toContain(`${field} must be`);
        expect(report.payload).toMatchObject({
          eventType: TOOL_INVOKE,
          eventId: invoke.id,
          source: 'plugin.search',
        });
        expect(report.causation.parentId).toBe(invoke.id);

        expect(progress).toHaveLength(0);
        expect(partials.map((event) => event.payload)).toMatchObject([
          { sequence: 1, payload: 'good' },
        ]);
        expect(results.map((event) => event.payload.output)).toEqual(['end']);
      },
    );

    it('reports a sequence that goes backwards as core.error and still delivers the event', async () => {
      const bus = new EventBus();
      const errors = record<CoreErrorPayload>(bus, CORE_ERROR);
      const partials = record<{ sequence: number; payload: unknown }>(bus, TOOL_STREAM_PARTIAL);
      await bridge(
        bus,
        toolOf([
          { kind: 'partial', sequence: 1, payload: 'a' },
          { kind: 'partial', sequence: 5, payload: 'b' },
          { kind: 'partial', sequence: 3, payload: 'c' },
          { kind: 'complete', sequence: 6 },
        ]),
        CALL,
      );
      expect(partials.map((event) => [event.payload.sequence, event.payload.payload])).toEqual([
        [1, 'a'],
        [5, 'b'],
        [3, 'c'],
      ]);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.payload.error).toBeInstanceOf(SequenceOrderError);
      expect(errors[0]!.payload.error).toMatchObject({ sequence: 3, previous: 5 });
      expect(errors[0]!.payload.message).toContain('sequence 3 after 5');
    });

    it('reports a repeated sequence', async () => {
      const bus = new EventBus();
      const errors = record<CoreErrorPayload>(bus, CORE_ERROR);
      await bridge(
        bus,
        toolOf([
          { kind: 'partial', sequence: 2, payload: 'a' },
          { kind: 'partial', sequence: 2, payload: 'b' },
          { kind: 'complete' },
        ]),
        CALL,
      );
      expect(errors.map((event) => event.payload.error)).toMatchObject([
        { sequence: 2, previous: 2 },
      ]);
    });
  });

  describe('sequences', () => {
    it('numbers events 1, 2, 3… when the tool leaves sequence unset', async () => {
      const bus = new EventBus();
      const seen = trace(bus);
      await bridge(
        bus,
        toolOf([
          { kind: 'progress', progress: 0 },
          { kind: 'partial', payload: 'a' },
          { kind: 'partial', payload: 'b' },
          { kind: 'progress', progress: 1 },
          { kind: 'complete' },
        ]),
        CALL,
      );
      expect(seen).toEqual([
        `${TOOL_STREAM_PROGRESS}:1`,
        `${TOOL_STREAM_PARTIAL}:2`,
        `${TOOL_STREAM_PARTIAL}:3`,
        `${TOOL_STREAM_PROGRESS}:4`,
        BEFORE_TOOL_RESULT,
        TOOL_RESULT,
      ]);
    });

    it('keeps the sequences a tool sets and numbers unset ones after them', async () => {
      const bus = new EventBus();
      const seen = trace(bus);
      const errors = record(bus, CORE_ERROR);
      await bridge(
        bus,
        toolOf([
          { kind: 'partial', sequence: 10, payload: 'a' },
          { kind: 'partial', payload: 'b' },
          { kind: 'complete' },
        ]),
        CALL,
      );
      expect(seen.slice(0, 2)).toEqual([`${TOOL_STREAM_PARTIAL}:10`, `${TOOL_STREAM_PARTIAL}:11`]);
      expect(errors).toHaveLength(0);
    });
  });
});
