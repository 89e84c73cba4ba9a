import { describe, expect, it } from 'vitest';
import { EventBus, type BusEvent } from '../../src/bus/index.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  type ToolCall,
  type ToolResult,
} from '../../src/events/index.js';
import { decodeEnvelope, encodeEnvelope, type DecodeSuccess } from '../../src/wire/index.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function decoded(line: string): DecodeSuccess {
  const result = decodeEnvelope(line);
  if (!result.ok) throw new Error(`rejected (${result.reason}): ${result.message}`);
  return result;
}

/** Decodes `line` onto a fresh bus and returns the event that bus dispatched. */
function replay(line: string): BusEvent {
  return new EventBus().emitEvent(decoded(line).event);
}

function sourceEvent<T>(type: string, payload: T, nanos: bigint): BusEvent<T> {
  const bus = new EventBus();
  const parent = bus.emit('agent.turn', null);
  return bus.withCausation({ sessionId: 'session-1', agentId: 'agent-7', depth: 2 }, () =>
    bus.emit(type, payload, {
      source: 'plugin.search',
      timeUnixNano: nanos,
      causation: { parentId: parent.id, parentSeq: parent.causation.sequence },
    }),
  );
}

describe('encodeEnvelope()', () => {
  it('writes one line with the Nexus journal keys in order', () => {
    const event = sourceEvent(
      'tool.stream.partial',
      { tool_id: 'tc_1' },
      1_777_636_800_123_456_789n,
    );
    const line = encodeEnvelope(event);
    expect(line).not.toContain('\n');
    expect(Object.keys(JSON.parse(line) as object)).toEqual([
      'seq',
      'ts',
      'type',
      'event_id',
      'source',
      'parent_id',
      'parent_seq',
      'session_id',
      'agent_id',
      'depth',
      'payload',
    ]);
    expect(JSON.parse(line)).toMatchObject({
      seq: 2,
      ts: '2026-05-01T12:00:00.123456789Z',
      type: 'tool.stream.partial',
      event_id: event.id,
      source: 'plugin.search',
      parent_id: event.causation.parentId,
      parent_seq: 1,
      session_id: 'session-1',
      agent_id: 'agent-7',
      depth: 2,
    });
  });

  it('leaves out source when the event has none and appends traceparent when given', () => {
    const event = new EventBus().emit('a', 1);
    const line = encodeEnvelope(event, { traceparent: TRACEPARENT });
    const keys = Object.keys(JSON.parse(line) as object);
    expect(keys).not.toContain('source');
    expect(keys.at(-1)).toBe('traceparent');
    expect(decoded(line).traceparent).toBe(TRACEPARENT);
  });

  it('refuses an invalid traceparent', () => {
    const event = new EventBus().emit('a', 1);
    expect(() => encodeEnvelope(event, { traceparent: 'not-a-traceparent' })).toThrow(TypeError);
  });

  it('throws a TypeError for a payload that cannot be JSON', () => {
    const event = new EventBus().emit('a', { big: 1n });
    expect(() => encodeEnvelope(event)).toThrow(TypeError);
  });

  it('writes lone surrogates as U+FFFD so the decoder accepts the line', () => {
    const event = new EventBus().emit('a', { text: 'x\ud800y', ['k\udc00']: ['\udbff'] });
    const result = decoded(encodeEnvelope(event));
    expect(result.event.payload).toEqual({ text: 'x\ufffdy', ['k\ufffd']: ['\ufffd'] });
  });

  it('keeps a literal backslash-u text as it is', () => {
    const event = new EventBus().emit('a', { text: '\\ud800 is an escape' });
    expect(decoded(encodeEnvelope(event)).event.payload).toEqual({ text: '\\ud800 is an escape' });
  });
});

describe('encodeEnvelope() and decodeEnvelope()', () => {
  it('round-trip every field, nanoseconds included', () => {
    const call: ToolCall = {
      id: 'tc_1',
      name: 'read_file',
      arguments: { path: '/etc/hosts', lines: [1, 2], nested: { deep: true } },
      turnId: 'turn-3',
      parentCallId: 'tc_0',
    };
    const original = sourceEvent(TOOL_INVOKE, call, 1_777_636_800_000_000_001n);
    const again = replay(encodeEnvelope(original));
    expect(again).toEqual(original);
    expect(again.timeUnixNano).toBe(1_777_636_800_000_000_001n);
  });

  it('round-trip a tool result with every optional field', () => {
    const result: ToolResult = {
      id: 'tc_1',
      name: 'read_file',
      output: 'done',
      error: 'disk full',
      cancelled: false,
      turnId: 'turn-3',
      outputStructured: { lines: 3 },
    };
    const original = sourceEvent(TOOL_RESULT, result, 1_777_636_800_999_999_999n);
    expect(replay(encodeEnvelope(original))).toEqual(original);
  });

  it('round-trip events of any type and payload, undefined included', () => {
    for (const payload of [undefined, null, 0, 'text', [1, 'two'], { a: { b: [null] } }]) {
      const original = sourceEvent('plan.update', payload, 5n);
      expect(replay(encodeEnvelope(original))).toEqual(original);
    }
  });

  it('round-trip a root event with empty causation fields', () => {
    const original = new EventBus().emit('agent.start', { ok: true });
    const again = replay(encodeEnvelope(original));
    expect(again).toEqual(original);
    expect(again.causation.parentId).toBe('');
  });
});
