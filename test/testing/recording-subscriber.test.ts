import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { RecordingSubscriber } from '../../src/testing/index.js';

describe('RecordingSubscriber', () => {
  it('records every event in dispatch order and picks them out by type', () => {
    const bus = new EventBus();
    const recorder = new RecordingSubscriber(bus);
    const first = bus.emit('tool.invoke', { id: 1 });
    bus.emit('tool.stream.partial', { sequence: 1 });
    const last = bus.emit('tool.result', { id: 1 });
    expect(recorder.types()).toEqual(['tool.invoke', 'tool.stream.partial', 'tool.result']);
    expect(recorder.ofType('tool.invoke')).toEqual([first]);
    expect(recorder.payloadsOf<{ sequence: number }>('tool.stream.partial')).toEqual([
      { sequence: 1 },
    ]);
    expect(recorder.last()).toBe(last);
    expect(recorder.last('tool.invoke')).toBe(first);
    expect(recorder.last('missing')).toBeUndefined();
    expect(recorder.byId(first.id)).toBe(first);
  });

  it('stops at maxEvents and counts what it dropped', () => {
    const bus = new EventBus();
    const recorder = new RecordingSubscriber(bus, { maxEvents: 2 });
    for (let index = 0; index < 5; index += 1) bus.emit('a', index);
    expect(recorder.payloadsOf('a')).toEqual([0, 1]);
    expect(recorder.dropped).toBe(3);
    recorder.clear();
    expect(recorder.events).toEqual([]);
    expect(recorder.dropped).toBe(0);
    bus.emit('a', 5);
    expect(recorder.payloadsOf('a')).toEqual([5]);
  });

  it('replays the ring when asked to', () => {
    const bus = new EventBus({ ringSize: 8 });
    bus.emit('before', null);
    const recorder = new RecordingSubscriber(bus, { replay: true });
    bus.emit('after', null);
    expect(recorder.types()).toEqual(['before', 'after']);
  });

  it('stops recording once unsubscribed, and unsubscribing twice is harmless', () => {
    const bus = new EventBus();
    const recorder = new RecordingSubscriber(bus);
    recorder.unsubscribe();
    recorder.unsubscribe();
    bus.emit('a', null);
    expect(recorder.events).toHaveLength(0);
  });

  it('rejects a maxEvents that is not a non-negative integer', () => {
    expect(() => new RecordingSubscriber(new EventBus(), { maxEvents: -1 })).toThrow(TypeError);
  });
});
