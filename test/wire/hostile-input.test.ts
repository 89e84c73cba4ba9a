import { describe, expect, it } from 'vitest';
import { EventBus, type BusEvent } from '../../src/bus/index.js';
import { TOOL_INVOKE, TOOL_RESULT, type ToolCall } from '../../src/events/index.js';
import {
  LineSplitter,
  REJECT_REASONS,
  decodeEnvelope,
  encodeEnvelope,
  type RejectReason,
} from '../../src/wire/index.js';

const LINES = 10_000;
const MAX_LINE_BYTES = 1024 * 1024;

/** Deterministic pseudo-random numbers (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Expected = 'ok' | RejectReason;

interface Sample {
  bytes: Buffer;
  expected: Expected;
  /** For a valid tool.invoke: the tool call id it must deliver. */
  callId?: string;
}

const bus = new EventBus({ ringSize: 0 });
const base = bus.emit('agent.turn', null);
const validEnvelope = JSON.parse(encodeEnvelope(base)) as Record<string, unknown>;

function withFields(fields: Record<string, unknown>): string {
  return JSON.stringify({ ...validEnvelope, ...fields });
}

function nested(levels: number): string {
  return `${'['.repeat(levels)}1${']'.repeat(levels)}`;
}

/** How many of {@link makers}, from the first, make valid lines. */
const VALID_MAKERS = 5;

/** Every way a line can be valid or bad, each with the outcome it must get. */
const makers: ((index: number) => Sample)[] = [
  (index) => {
    const call: ToolCall = {
      id: `tc_${index}`,
      name: 'search',
      arguments: { q: `query ${index}` },
    };
    const line = encodeEnvelope(bus.emit(TOOL_INVOKE, call));
    return { bytes: Buffer.from(line), expected: 'ok', callId: call.id };
  },
  (index) => {
    const go = {
      seq: index,
      ts: '2026-05-01T14:00:00.123456789+02:00',
      type: TOOL_INVOKE,
      source: 'nexus',
      payload: { _schema_version: 1, ID: `go_${index}`, Name: 'read_file', Arguments: null },
    };
    return { bytes: Buffer.from(`${JSON.stringify(go)}\r`), expected: 'ok', callId: `go_${index}` };
  },
  (index) => ({
    bytes: Buffer.from(
      encodeEnvelope(
        bus.emit('tool.stream.partial', {
          tool_name: 'search',
          tool_id: `tc_${index}`,
          turn_id: '',
          sequence: 1,
          payload: 'ünïcödé ✓ 😀',
        }),
      ),
    ),
    expected: 'ok',
  }),
  (index) => ({
    bytes: Buffer.from(
      encodeEnvelope(bus.emit(TOOL_RESULT, { id: `tc_${index}`, name: 'search', output: 'x' })),
    ),
    expected: 'ok',
  }),
  (index) => {
    const call = { id: `cls_${index}`, name: 'describe', arguments: { constructor: 'Foo' } };
    const line = encodeEnvelope(bus.emit(TOOL_INVOKE, call));
    return { bytes: Buffer.from(line), expected: 'ok', callId: call.id };
  },
  () => ({ bytes: Buffer.from('{"seq":1,"ts":'), expected: 'not_json' }),
  () => ({ bytes: Buffer.from('hello world'), expected: 'not_json' }),
  () => ({ bytes: Buffer.from('   \t '), expected: 'not_json' }),
  () => ({ bytes: Buffer.from('[1,2,3]'), expected: 'not_object' }),
  () => ({ bytes: Buffer.from('null'), expected: 'not_object' }),
  () => ({ bytes: Buffer.from(withFields({ type: 5 })), expected: 'wrong_type' }),
  () => ({ bytes: Buffer.from(withFields({ parent_seq: 'x' })), expected: 'wrong_type' }),
  () => ({ bytes: Buffer.from(withFields({ seq: -3 })), expected: 'wrong_type' }),
  () => ({
    bytes: Buffer.from(withFields({ type: TOOL_INVOKE, payload: { name: 'search' } })),
    expected: 'missing_field',
  }),
  () => ({
    bytes: Buffer.from(withFields({ type: TOOL_INVOKE, payload: { ID: 'tc' } })),
    expected: 'missing_field',
  }),
  () => ({ bytes: Buffer.from(withFields({ ts: undefined })), expected: 'missing_field' }),
  () => ({ bytes: Buffer.from(withFields({ ts: 'yesterday' })), expected: 'bad_timestamp' }),
  () => ({
    bytes: Buffer.from(
      withFields({ payload: 0 }).replace('"payload":0', `"payload":${nested(65)}`),
    ),
    expected: 'too_deep',
  }),
  () => ({
    bytes: Buffer.from(`{"payload":${nested(50_000)},"type":"x"}`),
    expected: 'too_deep',
  }),
  () => ({
    bytes: Buffer.from(`{"__proto__":{"polluted":"yes"},${withFields({}).slice(1)}`),
    expected: 'hostile_key',
  }),
  () => ({
    bytes: Buffer.from(
      withFields({ type: TOOL_INVOKE, payload: 0 }).replace(
        '"payload":0',
        '"payload":{"id":"a","name":"b","arguments":{"__proto__":{"polluted":"yes"}}}',
      ),
    ),
    expected: 'hostile_key',
  }),
  () => ({
    bytes: Buffer.from(
      withFields({ payload: { constructor: { prototype: { polluted: 'yes' } } } }),
    ),
    expected: 'hostile_key',
  }),
  () => ({
    bytes: Buffer.from(
      withFields({ payload: 0 }).replace(
        '"payload":0',
        '"payload":{"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":"yes"}}',
      ),
    ),
    expected: 'hostile_key',
  }),
  () => {
    const text = Buffer.from(withFields({ payload: 'AB' }));
    const at = text.indexOf('AB');
    text[at] = 0xff;
    return { bytes: text, expected: 'invalid_utf8' };
  },
  () => ({
    bytes: Buffer.concat([
      Buffer.from('{"x":"'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]),
    expected: 'invalid_utf8',
  }),
  () => ({
    bytes: Buffer.from(withFields({ payload: 'P' }).replace('"P"', '"\\ud800"')),
    expected: 'lone_surrogate',
  }),
];

function generate(): Sample[] {
  const next = random(20260501);
  const samples: Sample[] = [];
  for (let index = 0; index < LINES; index += 1) {
    // About half valid lines, the other half spread over every kind of bad line.
    const maker =
      next() < 0.5
        ? makers[Math.floor(next() * VALID_MAKERS)]!
        : makers[VALID_MAKERS + Math.floor(next() * (makers.length - VALID_MAKERS))]!;
    samples.push(maker(index));
  }
  // Three lines of 10 MB: one first, one in the middle, one last without a newline.
  const huge = (): Sample => ({
    bytes: Buffer.alloc(10 * 1024 * 1024, 'h'),
    expected: 'too_large',
  });
  samples.unshift(huge());
  samples.splice(LINES / 2, 0, huge());
  samples.push(huge());
  return samples;
}

describe('hostile input', () => {
  it('rejects every bad line with its reason and decodes every valid one, in a 10,000-line mix', () => {
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    const samples = generate();
    const stream = Buffer.concat(
      samples.flatMap((sample, index) =>
        index === samples.length - 1 ? [sample.bytes] : [sample.bytes, Buffer.from('\n')],
      ),
    );

    const outcomes: Expected[] = [];
    const rejectedBy = new Map<RejectReason, number>();
    const replayed = new EventBus({ ringSize: 0 });
    const invoked: string[] = [];
    replayed.subscribe<ToolCall>(TOOL_INVOKE, (event) => void invoked.push(event.payload.id));
    let largestBuffered = 0;
    const reject = (reason: RejectReason): void => {
      outcomes.push(reason);
      rejectedBy.set(reason, (rejectedBy.get(reason) ?? 0) + 1);
    };
    const splitter = new LineSplitter({
      maxLineBytes: MAX_LINE_BYTES,
      onLine: (line) => {
        const result = decodeEnvelope(line);
        if (!result.ok) {
          expect(REJECT_REASONS).toContain(result.reason);
          expect(result.message.length).toBeGreaterThan(0);
          reject(result.reason);
          return;
        }
        outcomes.push('ok');
        const event: BusEvent = replayed.emitEvent(result.event);
        // A careless consumer that merges payloads must still find nothing to pollute with.
        Object.assign({}, event.payload);
        mergeDeep({}, event.payload);
      },
      onOversizedLine: () => reject('too_large'),
    });

    const next = random(7);
    for (let offset = 0; offset < stream.length;) {
      const size = 1 + Math.floor(next() * 256 * 1024);
      expect(() => splitter.push(stream.subarray(offset, offset + size))).not.toThrow();
      largestBuffered = Math.max(largestBuffered, splitter.bufferedBytes);
      offset += size;
    }
    splitter.end();

    expect(outcomes).toEqual(samples.map((sample) => sample.expected));
    expect(invoked).toEqual(samples.flatMap((sample) => sample.callId ?? []));
    for (const reason of REJECT_REASONS) {
      const expected = samples.filter((sample) => sample.expected === reason).length;
      expect(rejectedBy.get(reason) ?? 0, reason).toBe(expected);
    }
    expect(rejectedBy.get('too_large')).toBe(3);
    expect(largestBuffered).toBeLessThanOrEqual(MAX_LINE_BYTES + 1);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

/** The classic prototype-polluting deep merge, to show that decoded payloads are safe with it. */
function mergeDeep(target: Record<string, unknown>, source: unknown): void {
  if (typeof source !== 'object' || source === null) return;
  for (const key of Object.keys(source)) {
    const value = (source as Record<string, unknown>)[key];
    if (typeof value === 'object' && value !== null) {
      if (typeof target[key] !== 'object' || target[key] === null) target[key] = {};
      mergeDeep(target[key] as Record<string, unknown>, value);
    } else {
      target[key] = value;
    }
  }
}
