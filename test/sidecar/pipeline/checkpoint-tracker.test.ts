import { describe, expect, it } from 'vitest';
import type { EventInit } from '../../../src/bus/index.js';
import { CheckpointTracker, OffsetPins } from '../../../src/sidecar/pipeline/index.js';

/** Feeds one 100-byte line per event, starting at `tracker.lineEnd`; returns its root. */
function read(
  tracker: CheckpointTracker,
  type: string,
  eventId: string,
  parentId = '',
  payload: unknown = undefined,
): number {
  const start = tracker.lineEnd;
  const event: EventInit = { type, payload, causation: { parentId, sessionId: 's' } };
  const root = tracker.rootOf(start, event, eventId);
  tracker.lineDone(root, start + 100);
  return root;
}

describe('OffsetPins', () => {
  it('reports the lowest pin whatever order pins arrive in', () => {
    const pins = new OffsetPins();
    const [a, b, c] = [{}, {}, {}];
    pins.pin(a, 500);
    pins.pin(b, 900);
    pins.pin(c, 100);
    expect(pins.lowest()).toBe(100);
    pins.unpin(c);
    expect(pins.lowest()).toBe(500);
    pins.unpin(a);
    pins.unpin(b);
    expect(pins.lowest()).toBeUndefined();
    expect(pins.size).toBe(0);
  });

  it('keeps the lower offset when a key is pinned twice', () => {
    const pins = new OffsetPins();
    const key = {};
    pins.pin(key, 300);
    pins.pin(key, 700);
    pins.pin(key, 200);
    expect(pins.lowest()).toBe(200);
    expect(pins.size).toBe(1);
  });

  it('stays small while one pin is held and thousands come and go', () => {
    const pins = new OffsetPins();
    pins.pin({}, 0);
    for (let index = 1; index <= 100_000; index += 1) {
      const key = {};
      pins.pin(key, index);
      pins.unpin(key);
    }
    expect(pins.lowest()).toBe(0);
    expect(pins.size).toBe(1);
  });
});

describe('CheckpointTracker', () => {
  it('moves to the end of the last line when nothing is pinned', () => {
    const tracker = new CheckpointTracker(0);
    read(tracker, 'llm.request', 'e1');
    read(tracker, 'llm.response', 'e2', 'e1');
    expect(tracker.checkpoint()).toBe(200);
  });

  it('stays at the root line of a span not yet exported', () => {
    const tracker = new CheckpointTracker(0);
    read(tracker, 'llm.request', 'r');
    const root = read(tracker, 'tool.invoke', 'i', 'r', { id: 'tc_1' });
    const span = {};
    tracker.pin(span, root);
    read(tracker, 'tool.stream.partial', 'p', 'i');
    expect(root).toBe(0);
    expect(tracker.checkpoint()).toBe(0);
    tracker.unpin(span);
    expect(tracker.checkpoint()).toBe(300);
  });

  it('does not stop between a line and the earlier line it depends on', () => {
    const tracker = new CheckpointTracker(0);
    read(tracker, 'llm.request', 'r'); // 0
    read(tracker, 'llm.response', 'm', 'r'); // 100
    const open = {};
    tracker.pin(open, read(tracker, 'tool.invoke', 'y', '', { id: 'tc_y' })); // 200
    read(tracker, 'tool.invoke', 'x', 'm', { id: 'tc_x' }); // 300, root 0
    // The lowest pin is 200, but line 300 depends on line 0: only 0 is safe.
    expect(tracker.checkpoint()).toBe(0);
  });

  it('pairs lines without event ids by tool call id', () => {
    const tracker = new CheckpointTracker(1000);
    read(tracker, 'tool.invoke', '', '', { id: 'tc_1' }); // 1000
    tracker.pin({}, read(tracker, 'tool.invoke', '', '', { id: 'tc_2' })); // 1100, stays open
    const root = read(tracker, 'tool.result', '', '', { id: 'tc_1' }); // 1200
    expect(root).toBe(1000);
    // tc_2 pins 1100, but tc_1's result at 1200 needs its invoke at 1000.
    expect(tracker.checkpoint()).toBe(1000);
  });

  it('gives an event read before its parent the lower root', () => {
    const tracker = new CheckpointTracker(0);
    read(tracker, 'tool.stream.partial', 'p', 'i', { tool_id: 'tc_1' }); // 0, parent unseen
    const root = read(tracker, 'tool.invoke', 'i', '', { id: 'tc_1' }); // 100
    expect(root).toBe(0);
  });

  it('never moves backwards, and holds still while events wait for their invoke', () => {
    const tracker = new CheckpointTracker(0);
    read(tracker, 'llm.request', 'a');
    expect(tracker.checkpoint()).toBe(100);
    const span = {};
    tracker.pin(span, read(tracker, 'tool.invoke', 'b', 'a', { id: 'tc_b' })); // root 0
    expect(tracker.checkpoint()).toBe(100);
    tracker.unpin(span);
    read(tracker, 'llm.request', 'c');
    expect(tracker.checkpoint(true)).toBe(100);
    expect(tracker.checkpoint()).toBe(300);
  });
});
