import { describe, expect, it, vi } from 'vitest';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  CORE_ERROR,
  EventBus,
  type BusEvent,
  type CoreErrorPayload,
  type ElidedPayload,
} from '../../src/index.js';

function record(bus: EventBus, type?: string): BusEvent[] {
  const seen: BusEvent[] = [];
  if (type === undefined) bus.subscribeAll((event) => void seen.push(event));
  else bus.subscribe(type, (event) => void seen.push(event));
  return seen;
}

describe('EventBus', () => {
  describe('emit()', () => {
    it('delivers to every subscriber and returns the dispatched event', () => {
      const bus = new EventBus();
      const first = record(bus, 'a');
      const second = record(bus, 'a');
      const event = bus.emit('a', { n: 1 }, { source: 'test' });
      expect(first).toEqual([event]);
      expect(second).toEqual([event]);
      expect(event.type).toBe('a');
      expect(event.payload).toEqual({ n: 1 });
      expect(event.source).toBe('test');
      expect(event.id).toMatch(/^[0-9a-f]{32}$/);
      expect(event.timestamp).toBeInstanceOf(Date);
    });

    it('only delivers events of the subscribed type', () => {
      const bus = new EventBus();
      const seen = record(bus, 'a');
      bus.emit('b', 1);
      expect(seen).toHaveLength(0);
    });

    it('gives every event a distinct id and a sequence that grows from 1', () => {
      const bus = new EventBus();
      const events = Array.from({ length: 100 }, () => bus.emit('a', null));
      expect(new Set(events.map((event) => event.id)).size).toBe(100);
      expect(events.map((event) => event.causation.sequence)).toEqual(
        Array.from({ length: 100 }, (_, index) => index + 1),
      );
    });

    it('stamps nanosecond times that keep the order of events in the same millisecond', () => {
      const bus = new EventBus();
      const events = Array.from({ length: 50 }, () => bus.emit('a', null));
      for (let index = 1; index < events.length; index += 1) {
        expect(events[index]!.timeUnixNano > events[index - 1]!.timeUnixNano).toBe(true);
      }
      const first = events[0]!;
      expect(Number(first.timeUnixNano / 1_000_000n)).toBe(first.timestamp.getTime());
      expect(Math.abs(first.timestamp.getTime() - Date.now())).toBeLessThan(5_000);
    });

    it('runs handlers in priority order, ties in subscription order', () => {
      const bus = new EventBus();
      const order: string[] = [];
      bus.subscribe('a', () => void order.push('p5'), { priority: 5 });
      bus.subscribe('a', () => void order.push('p0-first'));
      bus.subscribeAll(() => void order.push('all-p-1'), { priority: -1 });
      bus.subscribe('a', () => void order.push('p0-second'));
      bus.emit('a', null);
      expect(order).toEqual(['all-p-1', 'p0-first', 'p0-second', 'p5']);
    });

    it('keeps that order as subscriptions to every type and to one type come and go', () => {
      const bus = new EventBus();
      const order: string[] = [];
      bus.subscribeAll(() => void order.push('all-p1'), { priority: 1 });
      bus.emit('a', null);
      const offTyped = bus.subscribe('a', () => void order.push('a-p0'));
      bus.emit('a', null);
      bus.emit('b', null);
      const offAll = bus.subscribeAll(() => void order.push('all-p-1'), { priority: -1 });
      offTyped();
      bus.emit('a', null);
      offAll();
      bus.emit('a', null);
      expect(order).toEqual(['all-p1', 'a-p0', 'all-p1', 'all-p1', 'all-p-1', 'all-p1', 'all-p1']);
    });

    it('applies a subscription filter', () => {
      const bus = new EventBus();
      const seen: unknown[] = [];
      bus.subscribe<number>('n', (event) => void seen.push(event.payload), {
        filter: (event) => event.payload > 1,
      });
      bus.emit('n', 1);
      bus.emit('n', 2);
      expect(seen).toEqual([2]);
    });

    it('rejects an empty type or a handler that is not a function with a TypeError naming it', () => {
      const bus = new EventBus();
      expect(() => bus.emit('', null)).toThrow(/type must be a non-empty string/);
      expect(() => bus.subscribe('', () => {})).toThrow(TypeError);
      expect(() => bus.subscribe('a', 'nope' as never)).toThrow(/handler must be a function/);
      expect(() => bus.subscribeAll(undefined as never)).toThrow(/handler/);
      expect(() => bus.emitEvent({ type: 1 as never, payload: null })).toThrow(/type/);
    });
  });

  describe('causation', () => {
    it('marks root events with an empty parent', () => {
      const bus = new EventBus();
      const event = bus.emit('a', null);
      expect(event.causation).toMatchObject({ parentId: '', parentSeq: 0, depth: 0 });
    });

    it('links an event emitted by a handler to the event being handled', () => {
      const bus = new EventBus();
      const children = record(bus, 'child');
      bus.subscribe('parent', () => void bus.emit('child', null));
      const parent = bus.emit('parent', null);
      expect(children[0]!.causation.parentId).toBe(parent.id);
      expect(children[0]!.causation.parentSeq).toBe(parent.causation.sequence);
      expect(children[0]!.causation.sequence).toBeGreaterThan(parent.causation.sequence);
    });

    it.each([
      ['a promise continuation', (emit: () => void) => void Promise.resolve().then(emit)],
      ['a timer', (emit: () => void) => void setTimeout(emit, 5)],
      ['setImmediate', (emit: () => void) => void setImmediate(emit)],
      [
        'an async generator',
        (emit: () => void) => {
          async function* generate() {
            await nextTurn();
            yield 1;
          }
          void (async () => {
            for await (const _ of generate()) emit();
          })();
        },
      ],
    ])('keeps the parent when the handler emits later from %s', async (_name, schedule) => {
      const bus = new EventBus();
      const children = record(bus, 'child');
      bus.subscribe('parent', () => schedule(() => bus.emit('child', null)));
      const parent = bus.emit('parent', null);
      bus.emit('unrelated', null);
      await vi.waitFor(() => expect(children).toHaveLength(1));
      expect(children[0]!.causation.parentId).toBe(parent.id);
    });

    it('takes session, agent and depth from the innermost withCausation scope, now and later', async () => {
      const bus = new EventBus();
      bus.setDefaultCausation({ sessionId: 'default-session', agentId: 'default-agent' });
      const seen = record(bus);
      bus.withCausation({ sessionId: 's1', agentId: 'a1' }, () => {
        bus.emit('outer', null);
        bus.withCausation({ agentId: 'sub', depth: 1 }, () => {
          bus.emit('inner', null);
          setTimeout(() => bus.emit('later', null), 1);
        });
      });
      bus.emit('outside', null);
      await vi.waitFor(() => expect(seen).toHaveLength(4));
      const byType = Object.fromEntries(seen.map((event) => [event.type, event.causation]));
      expect(byType.outer).toMatchObject({ sessionId: 's1', agentId: 'a1', depth: 0 });
      expect(byType.inner).toMatchObject({ sessionId: 's1', agentId: 'sub', depth: 1 });
      expect(byType.later).toMatchObject({ sessionId: 's1', agentId: 'sub', depth: 1 });
      expect(byType.outside).toMatchObject({
        sessionId: 'default-session',
        agentId: 'default-agent',
        depth: 0,
      });
    });

    it('lets caller-set causation fields win', () => {
      const bus = new EventBus();
      const children = record(bus, 'child');
      bus.subscribe('parent', () => {
        bus.withCausation({ sessionId: 'scope' }, () =>
          bus.emit('child', null, {
            causation: { parentId: 'f'.repeat(32), sessionId: 'mine', depth: 3 },
          }),
        );
      });
      bus.emit('parent', null);
      expect(children[0]!.causation).toMatchObject({
        parentId: 'f'.repeat(32),
        sessionId: 'mine',
        depth: 3,
      });
    });

    it('hands the causation of the event being handled to what its handler emits', () => {
      const bus = new EventBus();
      const children = record(bus, 'child');
      bus.subscribe('parent', () => void bus.emit('child', null));
      bus.withCausation({ sessionId: 's9', agentId: 'a9', depth: 2 }, () =>
        bus.emit('parent', null),
      );
      bus.emitEvent({
        type: 'parent',
        payload: null,
        causation: { sessionId: 's7', agentId: 'a7', depth: 1 },
      });
      expect(children.map((event) => event.causation.sessionId)).toEqual(['s9', 's7']);
      expect(children.map((event) => event.causation.depth)).toEqual([2, 1]);
    });

    it('reports the causation an emit would get through currentCausation()', () => {
      const bus = new EventBus();
      let inside: ReturnType<EventBus['currentCausation']> | undefined;
      bus.subscribe('a', () => {
        inside = bus.withCausation({ depth: 4 }, () => bus.currentCausation());
      });
      const event = bus.withCausation({ sessionId: 's' }, () => bus.emit('a', null));
      expect(inside).toEqual({
        parentId: event.id,
        parentSeq: event.causation.sequence,
        sessionId: 's',
        agentId: '',
        depth: 4,
      });
      expect(bus.currentCausation().parentId).toBe('');
    });

    it('does not leak one bus frame into another bus', () => {
      const first = new EventBus();
      const second = new EventBus();
      const seen = record(second, 'b');
      first.subscribe('a', () => void second.emit('b', null));
      first.emit('a', null);
      expect(seen[0]!.causation.parentId).toBe('');
    });

    it('runs handlers in no dispatch frame with dispatchFrames off, keeping withCausation', async () => {
      const bus = new EventBus({ dispatchFrames: false });
      const children = record(bus, 'child');
      const inHandler: string[] = [];
      bus.subscribe('parent', () => {
        inHandler.push(bus.currentCausation().parentId);
        bus.emit('child', null);
        void Promise.resolve().then(() => bus.emit('child', null));
      });
      const parent = bus.emitEvent({
        type: 'parent',
        payload: null,
        causation: { parentId: 'p0', parentSeq: 3, sessionId: 's', agentId: 'a', depth: 2 },
      });
      await nextTurn();

      expect(parent.causation).toMatchObject({ parentId: 'p0', sessionId: 's', depth: 2 });
      expect(inHandler).toEqual(['']);
      expect(children.map((child) => child.causation.parentId)).toEqual(['', '']);
      const scoped = bus.withCausation({ sessionId: 'scoped' }, () => bus.emit('child', null));
      expect(scoped.causation.sessionId).toBe('scoped');
      const later = bus.withCausation({ sessionId: 'later' }, () =>
        Promise.resolve().then(() => bus.emit('child', null)),
      );
      expect((await later).causation.sessionId).toBe('later');
      expect(new EventBus({ dispatchFrames: true }).emit('a', null).causation.parentId).toBe('');
      expect(() => new EventBus({ dispatchFrames: 'no' as never })).toThrow(/dispatchFrames/);
    });

    it('rejects a malformed causation context', () => {
      const bus = new EventBus();
      expect(() => bus.withCausation({ depth: -1 }, () => 1)).toThrow(/depth/);
      expect(() => bus.setDefaultCausation({ sessionId: 5 as never })).toThrow(/sessionId/);
    });
  });

  describe('emitEvent()', () => {
    it('keeps the id, times and source of a pre-built event', () => {
      const bus = new EventBus();
      const seen = record(bus);
      const id = 'a'.repeat(32);
      const event = bus.emitEvent({
        type: 'x',
        id,
        payload: 1,
        timeUnixNano: 1_777_636_800_123_456_789n,
        source: 'journal',
      });
      expect(seen).toEqual([event]);
      expect(event.id).toBe(id);
      expect(event.timeUnixNano).toBe(1_777_636_800_123_456_789n);
      expect(event.timestamp.getTime()).toBe(1_777_636_800_123);
      expect(event.source).toBe('journal');
    });

    it('derives the Date of an emitted event from its nanoseconds when it is read', () => {
      const bus = new EventBus();
      const event = bus.emit('x', 1);
      expect(event.timestamp.getTime()).toBe(Number(event.timeUnixNano / 1_000_000n));
      expect(event.timestamp).toBe(event.timestamp);
    });

    it('derives nanoseconds from a Date timestamp', () => {
      const bus = new EventBus();
      const event = bus.emitEvent({ type: 'x', payload: 1, timestamp: new Date(1_000) });
      expect(event.timeUnixNano).toBe(1_000_000_000n);
    });
  });

  describe('handler failures', () => {
    it('keeps dispatching and reports a throwing handler as core.error', () => {
      const onError = vi.fn();
      const bus = new EventBus({ onError });
      const errors = record(bus, CORE_ERROR);
      const after = vi.fn();
      bus.subscribe(
        'a',
        () => {
          throw new Error('boom');
        },
        { source: 'plugin.broken' },
      );
      bus.subscribe('a', after);
      const event = bus.emit('a', null);
      expect(after).toHaveBeenCalledOnce();
      expect(errors).toHaveLength(1);
      const payload = errors[0]!.payload as CoreErrorPayload;
      expect(payload).toMatchObject({
        message: 'boom',
        eventType: 'a',
        eventId: event.id,
        source: 'plugin.broken',
      });
      expect(payload.error).toBeInstanceOf(Error);
      expect(errors[0]!.causation.parentId).toBe(event.id);
      expect(onError).toHaveBeenCalledWith(payload.error, event);
    });

    it('reports a rejected handler promise as core.error', async () => {
      const bus = new EventBus();
      const errors = record(bus, CORE_ERROR);
      bus.subscribe('a', () => Promise.reject(new Error('later')), { source: 'async' });
      bus.emit('a', null);
      await bus.drain(1_000);
      expect((errors[0]?.payload as CoreErrorPayload).message).toBe('later');
    });

    it('does not loop when a core.error handler throws', () => {
      const onError = vi.fn();
      const bus = new EventBus({ onError });
      let calls = 0;
      bus.subscribe(CORE_ERROR, () => {
        calls += 1;
        throw new Error('again');
      });
      bus.subscribe('a', () => {
        throw new Error('first');
      });
      bus.emit('a', null);
      expect(calls).toBe(1);
      expect(onError).toHaveBeenCalledTimes(2);
    });

    it('survives an onError hook that throws', () => {
      const bus = new EventBus({
        onError: () => {
          throw new Error('hook');
        },
      });
      const errors = record(bus, CORE_ERROR);
      bus.subscribe('a', () => {
        throw new Error('handler');
      });
      expect(() => bus.emit('a', null)).not.toThrow();
      expect(errors).toHaveLength(1);
    });
  });

  describe('unsubscribing', () => {
    it('stops delivery through the returned function', () => {
      const bus = new EventBus();
      const handler = vi.fn();
      const off = bus.subscribe('a', handler);
      bus.emit('a', null);
      off();
      off();
      bus.emit('a', null);
      expect(handler).toHaveBeenCalledOnce();
    });

    it('unsubscribes when the signal aborts, and subscribes nothing with an aborted one', () => {
      const bus = new EventBus();
      const controller = new AbortController();
      const handler = vi.fn();
      bus.subscribe('a', handler, { signal: controller.signal });
      bus.emit('a', null);
      controller.abort();
      bus.emit('a', null);
      const never = vi.fn();
      bus.subscribeAll(never, { signal: AbortSignal.abort() });
      bus.emit('a', null);
      expect(handler).toHaveBeenCalledOnce();
      expect(never).not.toHaveBeenCalled();
    });

    it('neither skips nor repeats other handlers when one unsubscribes during dispatch', () => {
      const bus = new EventBus();
      const calls: string[] = [];
      const offs: (() => void)[] = [];
      offs.push(
        bus.subscribe('a', () => {
          calls.push('first');
          offs[0]!();
        }),
      );
      bus.subscribe('a', () => void calls.push('second'));
      bus.subscribe('a', () => void calls.push('third'));
      bus.emit('a', null);
      bus.emit('a', null);
      expect(calls).toEqual(['first', 'second', 'third', 'second', 'third']);
    });

    it('does not run a handler another handler removed earlier in the same dispatch', () => {
      const bus = new EventBus();
      const late = vi.fn();
      let offLate = (): void => {};
      bus.subscribe('a', () => offLate());
      offLate = bus.subscribe('a', late);
      bus.emit('a', null);
      expect(late).not.toHaveBeenCalled();
    });
  });

  describe('subscribeAllReplay()', () => {
    it('replays the ring oldest first, then delivers live events', () => {
      const bus = new EventBus({ ringSize: 3 });
      for (const n of [1, 2, 3, 4]) bus.emit('n', n);
      const seen: unknown[] = [];
      bus.subscribeAllReplay((event) => void seen.push(event.payload));
      bus.emit('n', 5);
      expect(seen).toEqual([2, 3, 4, 5]);
    });

    it('keeps exactly the most recent ringSize events across many emits', () => {
      const bus = new EventBus({ ringSize: 100 });
      for (let n = 1; n <= 1_000; n += 1) bus.emit('n', n);
      const seen: unknown[] = [];
      bus.subscribeAllReplay((event) => void seen.push(event.payload));
      expect(seen).toEqual(Array.from({ length: 100 }, (_, index) => 901 + index));
    });

    it('keeps no event unless a ring is asked for', () => {
      const bus = new EventBus();
      bus.emit('n', 'x'.repeat(1_000_000));
      const seen: unknown[] = [];
      bus.subscribeAllReplay((event) => void seen.push(event.payload));
      expect(seen).toEqual([]);
      expect(bus.stats()).toEqual({ ringEvents: 0, ringBytes: 0, ringElided: 0, ringEvicted: 0 });
    });

    it('holds a payload over ringPayloadBytes by its size and a preview, and counts it', () => {
      const bus = new EventBus({ ringSize: 10, ringPayloadBytes: 1024 });
      const big = { tool_id: 'tc_1', payload: 'y'.repeat(20 * 1024 * 1024) };
      const emitted = bus.emit('tool.result', big);
      bus.emit('small', { ok: true });
      const seen: BusEvent[] = [];
      bus.subscribeAllReplay((event) => void seen.push(event));
      expect(seen.map((event) => event.type)).toEqual(['tool.result', 'small']);
      const elided = seen[0]!.payload as ElidedPayload;
      expect(elided.elided).toBe(true);
      expect(elided.bytes).toBeGreaterThan(20 * 1024 * 1024);
      expect(elided.preview.length).toBeLessThanOrEqual(256);
      expect(elided.preview).toContain('"tool_id":"tc_1"');
      expect(seen[0]!.id).toBe(emitted.id);
      expect(seen[1]!.payload).toEqual({ ok: true });
      expect(bus.stats()).toMatchObject({ ringEvents: 2, ringElided: 1, ringEvicted: 0 });
      expect(bus.stats().ringBytes).toBeLessThan(4096);
    });

    it('lets the oldest events go past ringBytes, and counts them', () => {
      const bus = new EventBus({ ringSize: 1000, ringBytes: 100_000, ringPayloadBytes: 50_000 });
      for (let n = 0; n < 50; n += 1) bus.emit('n', String(n).padEnd(10_000, '.'));
      const seen: string[] = [];
      bus.subscribeAllReplay((event) => void seen.push((event.payload as string).trim()));
      const { ringEvents, ringBytes, ringEvicted } = bus.stats();
      expect(ringBytes).toBeLessThanOrEqual(100_000);
      expect(ringEvents).toBe(seen.length);
      expect(ringEvents + ringEvicted).toBe(50);
      expect(seen.at(-1)).toMatch(/^49\./);
      expect(seen[0]).toMatch(new RegExp(`^${50 - ringEvents}\\.`));
    });

    it('refuses a ring byte limit that is not a non-negative integer', () => {
      expect(() => new EventBus({ ringBytes: -1 })).toThrow(/ringBytes/);
      expect(() => new EventBus({ ringPayloadBytes: 1.5 })).toThrow(/ringPayloadBytes/);
    });

    it('replays nothing with ringSize 0', () => {
      const bus = new EventBus({ ringSize: 0 });
      bus.emit('n', 1);
      const seen: unknown[] = [];
      bus.subscribeAllReplay((event) => void seen.push(event.payload));
      bus.emit('n', 2);
      expect(seen).toEqual([2]);
    });

    it('delivers events emitted during the replay once, after the replayed ones', () => {
      const bus = new EventBus({ ringSize: 16 });
      bus.emit('n', 1);
      bus.emit('n', 2);
      const seen: unknown[] = [];
      let emitted = false;
      bus.subscribeAllReplay((event) => {
        seen.push(event.payload);
        if (!emitted) {
          emitted = true;
          bus.emit('n', 3);
        }
      });
      bus.emit('n', 4);
      expect(seen).toEqual([1, 2, 3, 4]);
    });

    it('replays the event being dispatched once when called from its handler', () => {
      const bus = new EventBus({ ringSize: 16 });
      const seen: unknown[] = [];
      bus.subscribe('n', () => {
        bus.subscribeAllReplay((event) => void seen.push(event.payload));
      });
      bus.emit('n', 1);
      expect(seen).toEqual([1]);
    });
  });

  describe('emitVetoable()', () => {
    it('lets the first veto stop dispatch and returns it', () => {
      const bus = new EventBus();
      const later = vi.fn();
      let original: unknown;
      bus.subscribe<{ original: unknown; veto: unknown }>('before:x', (event) => {
        original = event.payload.original;
        event.payload.veto = { vetoed: true, reason: 'not now' };
      });
      bus.subscribe('before:x', later);
      expect(bus.emitVetoable('before:x', { a: 1 })).toEqual({ vetoed: true, reason: 'not now' });
      expect(original).toEqual({ a: 1 });
      expect(later).not.toHaveBeenCalled();
    });

    it('returns not vetoed when nobody vetoes', () => {
      const bus = new EventBus();
      bus.subscribe('before:x', () => {});
      expect(bus.emitVetoable('before:x', 1)).toEqual({ vetoed: false, reason: '' });
    });
  });

  describe('drain()', () => {
    it('waits for handler promises, including ones they start', async () => {
      const bus = new EventBus();
      const done: string[] = [];
      bus.subscribe('a', async () => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        bus.emit('b', null);
        done.push('a');
      });
      bus.subscribe('b', async () => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        done.push('b');
      });
      bus.emit('a', null);
      await expect(bus.drain()).resolves.toBe(true);
      expect(done).toEqual(['a', 'b']);
    });

    it('gives up after the timeout', async () => {
      vi.useFakeTimers();
      try {
        const bus = new EventBus();
        bus.subscribe('a', () => new Promise<void>(() => {}));
        bus.emit('a', null);
        const drained = bus.drain(100);
        await vi.advanceTimersByTimeAsync(100);
        await expect(drained).resolves.toBe(false);
      } finally {
        vi.useRealTimers();
      }
    });
  });

  describe('addDispatchScope()', () => {
    it('runs each handler inside the scope given for its event, once earlier handlers ran', () => {
      const bus = new EventBus();
      const scoped = new AsyncLocalStorage<string>();
      const started = new Set<string>();
      bus.subscribe('job', (event) => void started.add(event.id), { priority: -1 });
      const remove = bus.addDispatchScope((event) =>
        started.has(event.id)
          ? (fn, ...args) => scoped.run(`in ${event.type}`, fn, ...args)
          : undefined,
      );
      const seen: (string | undefined)[] = [];
      bus.subscribe('job', () => {
        seen.push(scoped.getStore());
        // Work the handler starts later still sees the scope.
        setImmediate(() => seen.push(scoped.getStore()));
      });
      bus.emit('job', {});
      remove();
      bus.emit('job', {});
      expect(seen.slice(0, 1)).toEqual(['in job']);
      return new Promise<void>((resolve) =>
        setImmediate(() => {
          expect(seen).toEqual(['in job', undefined, 'in job', undefined]);
          resolve();
        }),
      );
    });

    it('nests several scopes, the one added first outermost', () => {
      const bus = new EventBus();
      const entered: string[] = [];
      const scope =
        (name: string) =>
        () =>
        <A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R => {
          entered.push(name);
          return fn(...args);
        };
      bus.addDispatchScope(scope('outer'));
      bus.addDispatchScope(() => undefined);
      bus.addDispatchScope(scope('inner'));
      bus.subscribe('job', () => void entered.push('handler'));
      bus.emit('job', {});
      expect(entered).toEqual(['outer', 'inner', 'handler']);
    });

    it('delivers as if there were no scope when the scope throws', () => {
      const bus = new EventBus();
      bus.addDispatchScope(() => {
        throw new Error('broken scope');
      });
      const seen = record(bus, 'job');
      bus.emit('job', 1);
      expect(seen).toHaveLength(1);
    });

    it('refuses a scope that is not a function', () => {
      const bus = new EventBus();
      expect(() => bus.addDispatchScope('nope' as never)).toThrow(/scope must be a function/);
    });
  });
});
