import { describe, expect, it } from 'vitest';
import { emitQuiet, emitVetoableQuiet } from '../../src/bus/event-bus.js';
import { markFrameless } from '../../src/bus/frameless-handler.js';
import { withQuickPath, type QuickPath } from '../../src/bus/quick-path.js';
import { EventBus, type BusEvent } from '../../src/index.js';

/** A frameless subscriber with a quick path that takes what `accept` says, recording both paths. */
function quickSubscriber(
  bus: EventBus,
  accept: (type: string) => boolean,
): { quick: { type: string; parentId: string | undefined; time: bigint }[]; events: BusEvent[] } {
  const seen = {
    quick: [] as { type: string; parentId: string | undefined; time: bigint }[],
    events: [] as BusEvent[],
  };
  const quick: QuickPath = (type, _payload, causation, timeUnixNano) => {
    if (!accept(type)) return false;
    seen.quick.push({ type, parentId: causation.parentId, time: timeUnixNano });
    return true;
  };
  bus.subscribeAll(
    markFrameless(withQuickPath((event: BusEvent) => void seen.events.push(event), quick)),
  );
  return seen;
}

const CAUSATION = {
  parentId: 'a'.repeat(32),
  parentSeq: 1,
  sessionId: 's',
  agentId: 'a',
  depth: 0,
};

describe('emitQuiet()', () => {
  it('offers the event to the only subscriber’s quick path without building it, and numbers the next event as if it had been', () => {
    const bus = new EventBus();
    const seen = quickSubscriber(bus, () => true);
    const first = bus.emit('x', 1);
    emitQuiet(bus, 'tool.stream.partial', { sequence: 1 }, { causation: CAUSATION });
    const third = bus.emit('x', 3);

    expect(seen.quick.map(({ type, parentId }) => ({ type, parentId }))).toEqual([
      { type: 'tool.stream.partial', parentId: CAUSATION.parentId },
    ]);
    expect(typeof seen.quick[0]!.time).toBe('bigint');
    expect(seen.events.map((event) => event.type)).toEqual(['x', 'x']);
    expect(third.causation.sequence).toBe(first.causation.sequence + 2);
  });

  it('builds and delivers the event with the number and time it was offered with when the quick path declines', () => {
    const bus = new EventBus();
    const seen = quickSubscriber(bus, () => false);
    emitQuiet(bus, 'tool.stream.partial', { sequence: 1 }, { causation: CAUSATION, source: 'src' });
    const next = bus.emit('x', 2);

    expect(seen.quick).toEqual([]);
    expect(seen.events).toHaveLength(2);
    const [event] = seen.events;
    expect(event).toMatchObject({
      type: 'tool.stream.partial',
      source: 'src',
      payload: { sequence: 1 },
      causation: { ...CAUSATION, sequence: next.causation.sequence - 1 },
    });
    expect(event!.id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('delivers the whole event to every subscriber once another one listens, the quick path unused', () => {
    const bus = new EventBus();
    const seen = quickSubscriber(bus, () => true);
    const other: BusEvent[] = [];
    bus.subscribe('tool.stream.partial', (event) => void other.push(event));
    emitQuiet(bus, 'tool.stream.partial', { sequence: 1 }, { causation: CAUSATION });

    expect(seen.quick).toEqual([]);
    expect(other).toHaveLength(1);
    expect(seen.events).toEqual(other);
    expect(other[0]!.id).toMatch(/^[0-9a-f]{32}$/);
    expect(other[0]!.causation.parentId).toBe(CAUSATION.parentId);
  });

  it('builds every event while the bus keeps a replay ring, so a later subscriber replays it', () => {
    const bus = new EventBus({ ringSize: 8 });
    const seen = quickSubscriber(bus, () => true);
    emitQuiet(bus, 'tool.stream.partial', { sequence: 1 }, { causation: CAUSATION });
    const replayed: BusEvent[] = [];
    bus.subscribeAllReplay((event) => void replayed.push(event));

    expect(seen.quick).toEqual([]);
    expect(replayed.map((event) => event.type)).toEqual(['tool.stream.partial']);
  });
});

describe('emitQuiet() on a bus no one listens to', () => {
  it('builds nothing, yet numbers the next event as if the unheard one had been', () => {
    const bus = new EventBus();
    const first = bus.emit('x', 1);
    emitQuiet(bus, 'tool.stream.partial', { sequence: 1 }, { causation: CAUSATION });
    expect(emitVetoableQuiet(bus, 'before:tool.result', {}, { causation: CAUSATION })).toEqual({
      vetoed: false,
      reason: '',
    });
    expect(bus.emit('x', 2).causation.sequence).toBe(first.causation.sequence + 3);
  });
});

describe('emitVetoableQuiet()', () => {
  it('lets the only subscriber take a before: event on its quick path, unvetoed', () => {
    const bus = new EventBus();
    const seen = quickSubscriber(bus, (type) => type.startsWith('before:'));
    const decision = emitVetoableQuiet(
      bus,
      'before:tool.result',
      { id: 'c1' },
      { causation: CAUSATION },
    );

    expect(decision).toEqual({ vetoed: false, reason: '' });
    expect(seen.quick.map((entry) => entry.type)).toEqual(['before:tool.result']);
    expect(seen.events).toEqual([]);
  });

  it('delivers the vetoable event to every subscriber once another listens, and returns its veto', () => {
    const bus = new EventBus();
    const seen = quickSubscriber(bus, () => true);
    bus.subscribe<{ veto: { vetoed: boolean; reason: string } }>('before:tool.result', (event) => {
      event.payload.veto = { vetoed: true, reason: 'no' };
    });
    const decision = emitVetoableQuiet(
      bus,
      'before:tool.result',
      { id: 'c1' },
      { causation: CAUSATION },
    );

    expect(decision).toEqual({ vetoed: true, reason: 'no' });
    expect(seen.quick).toEqual([]);
    expect(seen.events[0]!.payload).toMatchObject({ original: { id: 'c1' } });
  });
});
