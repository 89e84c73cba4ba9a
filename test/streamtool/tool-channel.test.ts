import { describe, expect, it } from 'vitest';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  ChannelClosedError,
  ChannelFullError,
  EventBus,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  ToolChannel,
  ToolStreamError,
  TooltraceError,
  bridge,
  type BusEvent,
  type ToolEvent,
  type ToolResult,
} from '../../src/index.js';

async function drain(channel: ToolChannel): Promise<ToolEvent[]> {
  const events: ToolEvent[] = [];
  for await (const event of channel) events.push(event);
  return events;
}

/** Settles pending promise callbacks so a test can tell a waiting promise from a resolved one. */
async function flush(): Promise<void> {
  await nextTurn();
}

describe('ToolChannel', () => {
  describe('iteration', () => {
    it('yields pushed events in order, numbered 1, 2, 3…, and ends after complete', async () => {
      const channel = new ToolChannel();
      void channel.progress(0.5, 'halfway');
      void channel.partial('chunk');
      void channel.complete({ total: 1 });
      expect(await drain(channel)).toEqual([
        { kind: 'progress', sequence: 1, progress: 0.5, payload: 'halfway' },
        { kind: 'partial', sequence: 2, payload: 'chunk' },
        { kind: 'complete', sequence: 3, payload: { total: 1 } },
      ]);
    });

    it('ends after fail, carrying the error', async () => {
      const channel = new ToolChannel();
      const failure = new Error('disk full');
      void channel.partial('a');
      void channel.fail(failure);
      const events = await drain(channel);
      expect(events.map((event) => event.kind)).toEqual(['partial', 'error']);
      expect(events[1]!.error).toBe(failure);
    });

    it('wraps a failure that is not an Error in a ToolStreamError whose cause it is', async () => {
      const channel = new ToolChannel();
      void channel.fail('exit code 2');
      const [event] = await drain(channel);
      expect(event!.error).toBeInstanceOf(ToolStreamError);
      expect(event!.error).toMatchObject({ message: 'exit code 2', cause: 'exit code 2' });
    });

    it('delivers a push to a reader that was already waiting', async () => {
      const channel = new ToolChannel();
      const iterator = channel[Symbol.asyncIterator]();
      const pending = iterator.next();
      await flush();
      void channel.partial('late');
      await expect(pending).resolves.toEqual({
        value: { kind: 'partial', sequence: 1, payload: 'late' },
        done: false,
      });
    });

    it('ends without a terminal event on close(), after what is buffered', async () => {
      const channel = new ToolChannel();
      void channel.partial('a');
      channel.close();
      channel.close();
      expect(channel.closed).toBe(true);
      expect(await drain(channel)).toEqual([{ kind: 'partial', sequence: 1, payload: 'a' }]);
    });

    it('ends a waiting reader on close()', async () => {
      const channel = new ToolChannel();
      const iterator = channel[Symbol.asyncIterator]();
      const pending = iterator.next();
      channel.close();
      await expect(pending).resolves.toEqual({ value: undefined, done: true });
    });
  });

  describe('refusing pushes', () => {
    it.each([
      ['complete', (channel: ToolChannel) => void channel.complete('x'), 'complete'],
      ['fail', (channel: ToolChannel) => void channel.fail(new Error('x')), 'error'],
      ['close', (channel: ToolChannel) => channel.close(), 'closed'],
    ])('throws ChannelClosedError for a push after %s', (_name, end, endedBy) => {
      const channel = new ToolChannel();
      end(channel);
      expect(channel.closed).toBe(true);
      let thrown: unknown;
      try {
        void channel.partial('too late');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ChannelClosedError);
      expect(thrown).toBeInstanceOf(TooltraceError);
      expect(thrown).toMatchObject({ name: 'ChannelClosedError', endedBy, eventKind: 'partial' });
      expect((thrown as Error).message).toMatch(/^cannot push a partial event: /);
    });

    it('refuses a second terminal event', () => {
      const channel = new ToolChannel();
      void channel.complete();
      expect(() => channel.fail(new Error('x'))).toThrow(
        'cannot push an error event: the channel already ended with a complete event',
      );
      expect(() => channel.complete()).toThrow(ChannelClosedError);
    });

    it('does nothing on close() after a terminal event', async () => {
      const channel = new ToolChannel();
      void channel.complete('done');
      channel.close();
      expect(() => channel.partial('x')).toThrow('already ended with a complete event');
      expect((await drain(channel)).map((event) => event.kind)).toEqual(['complete']);
    });

    it('rejects a progress outside 0..1 that is not -1 with a RangeError', () => {
      const channel = new ToolChannel();
      expect(() => channel.progress(1.2)).toThrow(RangeError);
      expect(() => channel.progress(-0.1)).toThrow('progress must be a number from 0 to 1');
      expect(() => channel.progress(Number.NaN)).toThrow(RangeError);
      expect(() => channel.progress(-1)).not.toThrow();
    });
  });

  describe('backpressure', () => {
    it('holds 64 events by default', () => {
      expect(new ToolChannel().capacity).toBe(64);
    });

    it('rejects a capacity that is not a positive integer', () => {
      expect(() => new ToolChannel({ capacity: 0 })).toThrow(
        'options.capacity must be a positive integer, got 0',
      );
      expect(() => new ToolChannel({ capacity: 1.5 })).toThrow(RangeError);
    });

    it('resolves pushes while there is room and makes the next wait until the consumer reads', async () => {
      const channel = new ToolChannel({ capacity: 2 });
      const settled: string[] = [];
      void channel.partial('a').then(() => settled.push('a'));
      void channel.partial('b').then(() => settled.push('b'));
      void channel.partial('c').then(() => settled.push('c'));
      await flush();
      expect(settled).toEqual(['a', 'b']);

      const iterator = channel[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toMatchObject({ payload: 'a', sequence: 1 });
      await flush();
      expect(settled).toEqual(['a', 'b', 'c']);
      expect((await iterator.next()).value).toMatchObject({ payload: 'b', sequence: 2 });
      expect((await iterator.next()).value).toMatchObject({ payload: 'c', sequence: 3 });
    });

    it('keeps a producer that awaits its pushes no more than capacity events ahead', async () => {
      const channel = new ToolChannel({ capacity: 3 });
      let produced = 0;
      const producer = (async () => {
        for (let index = 0; index < 10; index += 1) {
          await channel.partial(index);
          produced += 1;
        }
        await channel.complete();
      })();
      await flush();
      expect(produced).toBe(3);
      const events = await drain(channel);
      await producer;
      expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    });

    it('throws ChannelFullError once as many pushes wait as the channel holds', () => {
      const channel = new ToolChannel({ capacity: 2 });
      for (let index = 0; index < 4; index += 1) void channel.partial(index);
      let thrown: unknown;
      try {
        void channel.partial('one too many');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ChannelFullError);
      expect(thrown).toMatchObject({ name: 'ChannelFullError', capacity: 2 });
      // The refused push did not use up a sequence number.
      expect(() => channel.complete()).toThrow(ChannelFullError);
    });

    it('releases waiting producers and refuses later pushes once the consumer stops reading', async () => {
      const channel = new ToolChannel({ capacity: 1 });
      void channel.partial('a');
      const waiting = channel.partial('b');
      const iterator = channel[Symbol.asyncIterator]();
      await iterator.return!();
      await expect(waiting).resolves.toBeUndefined();
      expect(() => channel.partial('c')).toThrow(
        'cannot push a partial event: the consumer stopped reading the channel',
      );
      await expect(iterator.next()).resolves.toEqual({ value: undefined, done: true });
    });
  });

  describe('through bridge()', () => {
    it('projects a callback-driven tool and applies the no-terminal rule on close()', async () => {
      const bus = new EventBus();
      const seen: BusEvent[] = [];
      bus.subscribeAll((event) => void seen.push(event));
      const tool = {
        name: 'build',
        stream() {
          const channel = new ToolChannel({ capacity: 4 });
          // Stands in for a child process reporting on stdout.
          setImmediate(() => {
            void channel.progress(-1, 'compiling');
            void channel.partial('main.o');
            void channel.partial('app');
            channel.close();
          });
          return channel;
        },
      };
      await bridge(bus, tool, { id: 'tc_7', name: 'build', arguments: {} });
      const stream = seen.filter((event) => event.type.startsWith('tool.stream.'));
      expect(stream.map((event) => [event.type, (event.payload as ToolEvent).sequence])).toEqual([
        [TOOL_STREAM_PROGRESS, 1],
        [TOOL_STREAM_PARTIAL, 2],
        [TOOL_STREAM_PARTIAL, 3],
      ]);
      const results = seen.filter((event) => event.type === TOOL_RESULT);
      expect(results.map((event) => (event.payload as ToolResult).output)).toEqual(['app']);
    });

    it('turns a pushed failure into an error result', async () => {
      const bus = new EventBus();
      const results: ToolResult[] = [];
      bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
      const channel = new ToolChannel();
      void channel.fail(new Error('linker failed'));
      await expect(
        bridge(
          bus,
          { name: 'build', stream: () => channel },
          { id: 'tc_8', name: 'build', arguments: {} },
        ),
      ).rejects.toThrow('linker failed');
      expect(results.map((result) => result.error)).toEqual(['linker failed']);
    });
  });

  describe('annotate()', () => {
    it('puts its attributes on the result of a call cancelled before bridge read any event, events winning', async () => {
      const bus = new EventBus();
      const results: ToolResult[] = [];
      bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
      const controller = new AbortController();
      let channel: ToolChannel | undefined;
      const call = bridge(
        bus,
        {
          name: 'fetch',
          stream() {
            channel = new ToolChannel();
            channel.annotate({ 'rpc.id': '7', 'peer.kind': 'first' });
            void channel.progress(-1, undefined);
            return channel;
          },
        },
        { id: 'tc_1', name: 'fetch', arguments: {} },
        { signal: controller.signal },
      );
      while (channel === undefined) await nextTurn();
      channel.annotate({ 'peer.kind': 'second' });
      controller.abort(new Error('stop'));
      await expect(call).rejects.toThrow('stop');
      expect(results).toMatchObject([
        { cancelled: true, attributes: { 'rpc.id': '7', 'peer.kind': 'second' } },
      ]);
    });

    it('refuses anything but an object', () => {
      expect(() => new ToolChannel().annotate(null as never)).toThrow(TypeError);
    });
  });
});
