import { journalLines } from './journal-lines.js';

/** A small seeded PRNG (mulberry32), so a failing mix can be reproduced. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const TS = '"ts":"2026-05-01T12:00:00.5Z"';

/** Hostile line makers, by the reason the sidecar must count them under. */
const MAKERS: Record<string, ((index: number, random: () => number) => string | Buffer)[]> = {
  not_json: [
    (index) => `this is not json ${index}`,
    (index) => `{"seq":${index},"type":"tool.invoke",`,
    () => '}{',
    () => "{'single':'quotes'}",
    (_, random) =>
      Array.from({ length: 40 }, () => String.fromCharCode(33 + Math.floor(random() * 90))).join(
        '',
      ),
  ],
  not_object: [() => '[1,2,3]', () => '"just a string"', (index) => String(index), () => 'null'],
  missing_field: [
    (index) => `{"seq":${index},${TS}}`,
    () => '{"type":"tool.invoke"}',
    () => `{"type":"tool.invoke",${TS},"payload":{"Name":"search"}}`,
  ],
  wrong_type: [
    () => `{"type":5,${TS}}`,
    () => `{"type":"note",${TS},"parent_seq":"deep"}`,
    () => `{"type":"note",${TS},"seq":-1}`,
    () => `{"type":"note",${TS},"event_id":7}`,
    () => `{"type":"tool.invoke",${TS},"payload":{"ID":7,"Name":"y","Arguments":{}}}`,
  ],
  bad_timestamp: [
    () => '{"type":"note","ts":"yesterday"}',
    () => '{"type":"note","ts":"2026-13-45T99:00:00Z"}',
  ],
  too_deep: [
    () => `{"type":"note",${TS},"payload":${'['.repeat(100)}${']'.repeat(100)}}`,
    () => `{"type":"note",${TS},"payload":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    () => `${'['.repeat(20_000)}${']'.repeat(20_000)}`.replace(/^\[/, '{"a":[').concat('}'),
  ],
  hostile_key: [
    () => `{"__proto__":{"polluted":true},"type":"note",${TS}}`,
    () => `{"type":"note",${TS},"payload":{"constructor":{"prototype":{"x":1}}}}`,
    () => `{"type":"note",${TS},"payload":[{"a":[{"__proto__":null}]}]}`,
  ],
  invalid_utf8: [
    () =>
      Buffer.concat([
        Buffer.from(`{"type":"note",${TS},"payload":"`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]),
    () =>
      Buffer.concat([
        Buffer.from(`{"type":"note",${TS},"payload":"`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}'),
      ]),
    () =>
      Buffer.concat([
        Buffer.from(`{"type":"note",${TS},"payload":"`),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('"}'),
      ]),
    () =>
      Buffer.concat([
        Buffer.from(`{"type":"note",${TS},"payload":"`),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from('"}'),
      ]),
  ],
  lone_surrogate: [
    () => `{"type":"note",${TS},"payload":"\\ud800 alone"}`,
    () => `{"type":"note",${TS},"payload":{"\\udfff":1}}`,
    () =>
      `{"type":"tool.stream.partial",${TS},"payload":{"tool_name":"s","tool_id":"t","turn_id":"","sequence":1,"payload":"\\udbff"}}`,
  ],
};

/** A mix of valid journal lines and hostile ones, and how many of each reason it holds. */
export interface HostileMix {
  /** Lines without terminators; joined with `\n` (a few valid ones with `\r\n`). */
  body: Buffer;
  /** How many hostile lines of each reason. */
  expected: Record<string, number>;
  /** Tool calls in the valid lines. */
  calls: number;
}

/**
 * `hostile` hostile lines (plus `hugeLines` lines of 10 MB) scattered, at seeded random places,
 * among the lines of `calls` valid tool calls.
 */
export function hostileMix(options: {
  calls: number;
  hostile: number;
  hugeLines: number;
  seed: number;
}): HostileMix {
  const random = seededRandom(options.seed);
  const reasons = Object.keys(MAKERS);
  const expected: Record<string, number> = {};
  const hostile: (string | Buffer)[] = [];
  for (let index = 0; index < options.hostile; index += 1) {
    const reason = reasons[index % reasons.length]!;
    const makers = MAKERS[reason]!;
    hostile.push(makers[Math.floor(random() * makers.length)]!(index, random));
    expected[reason] = (expected[reason] ?? 0) + 1;
  }
  for (let index = 0; index < options.hugeLines; index += 1) {
    hostile.push(`{"type":"note",${TS},"payload":"${'x'.repeat(10 * 1024 * 1024)}"}`);
    expected.too_large = (expected.too_large ?? 0) + 1;
  }
  const valid = journalLines({ calls: options.calls });
  const slots: (string | Buffer)[][] = valid.map((line) => [line]);
  for (const line of hostile) slots[Math.floor(random() * slots.length)]!.push(line);
  const parts: Buffer[] = [];
  let lineNumber = 0;
  for (const slot of slots) {
    for (const line of slot) {
      lineNumber += 1;
      parts.push(typeof line === 'string' ? Buffer.from(line) : line);
      parts.push(Buffer.from(lineNumber % 97 === 0 ? '\r\n' : '\n'));
    }
  }
  return { body: Buffer.concat(parts), expected, calls: options.calls };
}
