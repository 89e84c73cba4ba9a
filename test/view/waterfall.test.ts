import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatDuration, InFlightSnapshots, renderWaterfall } from '../../src/view/index.js';
import { terminalWidth } from '../../src/view/terminal-width.js';
import type { ReceivedSpan } from '../../src/otlp/index.js';

const TRACE = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OTHER_TRACE = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
/** 2026-01-01T00:00:00Z in nanoseconds. */
const T0 = 1_767_225_600_000_000_000n;
const MS = 1_000_000n;

interface SpanSpec {
  id: string;
  name: string;
  parent?: string;
  trace?: string;
  /** Start and end, in milliseconds after T0. */
  at: [number, number];
  status?: { code: number; message: string };
  attributes?: Record<string, unknown>;
  events?: number;
}

/** A hand-made span as `decodeTraceRequest` would return it. */
function span(spec: SpanSpec): ReceivedSpan {
  return {
    traceId: spec.trace ?? TRACE,
    spanId: spec.id.padStart(16, '0'),
    parentSpanId: spec.parent === undefined ? '' : spec.parent.padStart(16, '0'),
    traceState: '',
    flags: 1,
    name: spec.name,
    kind: 1,
    startTimeUnixNano: T0 + BigInt(spec.at[0]) * MS,
    endTimeUnixNano: T0 + BigInt(spec.at[1]) * MS,
    attributes: spec.attributes ?? {},
    events: Array.from({ length: spec.events ?? 0 }, (_, index) => ({
      name: 'tooltrace.stream.partial',
      timeUnixNano: T0 + BigInt(index) * MS,
      attributes: {},
    })),
    links: [],
    status: spec.status ?? { code: 1, message: '' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    resource: { 'service.name': 'test' },
    scope: { name: 'tooltrace', version: '0.1.0' },
    encoding: 'json',
  };
}

/** The drawn rows without the header, each trimmed of the two-space margin. */
function rows(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .map((line) => line.slice(2));
}

/** The label column (name with its tree connectors) of each row. */
function labels(text: string): string[] {
  return rows(text).map((row) => /^(?:│ {2}| {3}|├─ |└─ )*\S+/.exec(row)![0]);
}

function rowOf(text: string, name: string): string {
  const found = rows(text).find((row) => row.includes(` ${name} `) || row.startsWith(`${name} `));
  if (found === undefined) throw new Error(`no row for ${name} in\n${text}`);
  return found;
}

/** Draws `spans` as `tooltrace view` and the demo do: snapshots taken out as they are read. */
function drawnAsRead(spans: ReceivedSpan[]): string {
  const snapshots = new InFlightSnapshots();
  const drawn = spans.filter((read) => !snapshots.take(read));
  return renderWaterfall([...drawn, ...snapshots.unended(drawn)], { snapshots: snapshots.count });
}

describe('renderWaterfall()', () => {
  describe('the tree', () => {
    it('draws children under their parent in start order, whatever the input order', () => {
      const text = renderWaterfall([
        span({ id: '4', name: 'lookup_weather', parent: '3', at: [30, 40] }),
        span({ id: '2', name: 'write_report', at: [0, 50] }),
        span({ id: '5', name: 'pick_hotel', parent: '3', at: [20, 25] }),
        span({ id: '3', name: 'plan_trip', at: [10, 60] }),
        span({ id: '6', name: 'summarize', parent: '5', at: [21, 24] }),
      ]);
      expect(labels(text)).toEqual([
        'write_report',
        'plan_trip',
        '├─ pick_hotel',
        '│  └─ summarize',
        '└─ lookup_weather',
      ]);
    });

    it('continues the vertical line only below a child that has later siblings', () => {
      const text = renderWaterfall([
        span({ id: '1', name: 'root', at: [0, 100] }),
        span({ id: '2', name: 'first', parent: '1', at: [10, 20] }),
        span({ id: '3', name: 'first_child', parent: '2', at: [11, 12] }),
        span({ id: '4', name: 'last', parent: '1', at: [30, 40] }),
        span({ id: '5', name: 'last_child', parent: '4', at: [31, 32] }),
        span({ id: '6', name: 'grandchild', parent: '5', at: [31, 32] }),
      ]);
      expect(labels(text)).toEqual([
        'root',
        '├─ first',
        '│  └─ first_child',
        '└─ last',
        '   └─ last_child',
        '      └─ grandchild',
      ]);
    });

    it('draws a span whose parent is missing as a root', () => {
      const text = renderWaterfall([
        span({ id: '1', name: 'orphan', parent: 'ffff', at: [0, 10] }),
        span({ id: '2', name: 'child', parent: '1', at: [1, 2] }),
      ]);
      expect(labels(text)).toEqual(['orphan', '└─ child']);
    });

    it('draws every span once even when parent links form a cycle', () => {
      const text = renderWaterfall([
        span({ id: '1', name: 'alpha', parent: '2', at: [0, 10] }),
        span({ id: '2', name: 'beta', parent: '1', at: [1, 9] }),
        span({ id: '3', name: 'gamma', parent: '3', at: [2, 8] }),
      ]);
      expect(labels(text).sort()).toEqual(['alpha', 'gamma', '└─ beta']);
      expect(text).toContain(' 3 spans ');
    });

    it('draws a span that arrived twice once, and counts it once', () => {
      const report = span({ id: '1', name: 'write_report', at: [0, 10] });
      const text = renderWaterfall([report, { ...report }]);
      expect(labels(text)).toEqual(['write_report']);
      expect(text.split('\n')[0]).toContain(' 1 span ');
    });

    it('draws one block per trace, earliest trace first, with its span count and duration', () => {
      const text = renderWaterfall([
        span({ id: '1', name: 'later', trace: OTHER_TRACE, at: [500, 2000] }),
        span({ id: '2', name: 'early', at: [0, 10] }),
        span({ id: '3', name: 'early_child', parent: '2', at: [2, 4] }),
      ]);
      const blocks = text.trimEnd().split('\n\n');
      expect(blocks).toHaveLength(2);
      expect(blocks[0]!.split('\n')[0]).toBe(`trace ${TRACE}  2 spans  10ms`);
      expect(blocks[1]!.split('\n')[0]).toBe(`trace ${OTHER_TRACE}  1 span  1.50s`);
      expect(labels(blocks[1]!)).toEqual(['later']);
    });

    it('counts in-flight snapshots below the trace instead of drawing them next to their call', () => {
      const snapshot = (id: string, update: number): ReceivedSpan =>
        span({
          id,
          name: 'execute_tool slow (in flight)',
          parent: '1',
          at: [0, update * 1000],
          status: { code: 0, message: '' },
          attributes: { 'tooltrace.inflight': true, 'tooltrace.inflight.update': update },
        });
      const text = drawnAsRead([
        snapshot('2', 1),
        span({ id: '1', name: 'execute_tool slow', at: [0, 2500] }),
        snapshot('3', 2),
      ]);
      expect(rows(text)).toHaveLength(1);
      expect(rows(text)[0]).toMatch(/^execute_tool slow {2}/);
      expect(text.split('\n')[0]).toContain(' 1 span ');
      expect(text.trimEnd().split('\n').at(-1)).toBe(
        '2 in-flight updates were exported while calls ran.',
      );
    });

    it('draws a call that never ended from its latest in-flight snapshot', () => {
      const snapshot = (id: string, update: number, progress: number): ReceivedSpan =>
        span({
          id,
          name: 'execute_tool slow (in flight)',
          parent: 'dead',
          at: [0, update * 1000],
          status: { code: 0, message: '' },
          attributes: {
            'tooltrace.inflight': true,
            'tooltrace.inflight.update': update,
            'tooltrace.stream.progress.count': update,
            'tooltrace.stream.last_progress': progress,
          },
        });
      const text = drawnAsRead([snapshot('3', 2, 0.5), snapshot('2', 1, 0.25)]);
      expect(rows(text)).toHaveLength(1);
      expect(rows(text)[0]).toMatch(/^execute_tool slow \(in flight\) {2}/);
      expect(rows(text)[0]).toContain('2.00s  UNSET  2 progress to 50%');
      expect(text).toContain('2 in-flight updates were exported while calls ran.');
    });

    it('lines the bars up in one column', () => {
      const text = renderWaterfall([
        span({ id: '1', name: 'short', at: [0, 100] }),
        span({ id: '2', name: 'a_much_longer_name', parent: '1', at: [50, 100] }),
      ]);
      const [first, second] = rows(text);
      expect(first!.indexOf('█')).toBe(second!.indexOf('└─') + '└─ a_much_longer_name  '.length);
    });
  });

  describe('the bars', () => {
    it('places each bar on the trace time line', () => {
      const text = renderWaterfall(
        [
          span({ id: '1', name: 'whole', at: [0, 100] }),
          span({ id: '2', name: 'first_half', parent: '1', at: [0, 50] }),
          span({ id: '3', name: 'last_quarter', parent: '1', at: [75, 100] }),
        ],
        { barWidth: 20 },
      );
      expect(rowOf(text, 'whole')).toContain('█'.repeat(20));
      expect(rowOf(text, 'first_half')).toContain(`${'█'.repeat(10)}${' '.repeat(10)}`);
      expect(rowOf(text, 'last_quarter')).toContain(`${' '.repeat(15)}${'█'.repeat(5)}`);
    });

    it('gives an instant span one block', () => {
      const text = renderWaterfall([
        span({ id: '1', name: 'whole', at: [0, 100] }),
        span({ id: '2', name: 'instant', parent: '1', at: [100, 100] }),
      ]);
      expect(rowOf(text, 'instant')).toMatch(/ {31}█ /);
    });
  });

  describe('the status', () => {
    it('marks OK, ERROR with its message, CANCELLED and UNSET', () => {
      const text = renderWaterfall([
        span({ id: '1', name: 'ok_call', at: [0, 10] }),
        span({
          id: '2',
          name: 'failed_call',
          at: [0, 10],
          status: { code: 2, message: 'price feed returned HTTP 503' },
          attributes: { 'error.type': 'tool_error' },
        }),
        span({
          id: '3',
          name: 'cancelled_call',
          at: [0, 10],
          status: { code: 2, message: 'The operation was aborted due to timeout' },
          attributes: { 'error.type': 'cancelled', 'tooltrace.tool.cancelled': true },
        }),
        span({ id: '4', name: 'unset_call', at: [0, 10], status: { code: 0, message: '' } }),
      ]);
      expect(rowOf(text, 'ok_call')).toMatch(/ OK$/);
      expect(rowOf(text, 'failed_call')).toMatch(/ ERROR {2}"price feed returned HTTP 503"$/);
      expect(rowOf(text, 'cancelled_call')).toMatch(
        / CANCELLED {2}"The operation was aborted due to timeout"$/,
      );
      expect(rowOf(text, 'cancelled_call')).not.toContain('ERROR');
      expect(rowOf(text, 'unset_call')).toMatch(/ UNSET$/);
    });

    it('tells a cancelled call by error.type alone', () => {
      const text = renderWaterfall([
        span({
          id: '1',
          name: 'go_cancelled',
          at: [0, 10],
          status: { code: 2, message: 'cancelled' },
          attributes: { 'error.type': 'cancelled' },
        }),
      ]);
      expect(rowOf(text, 'go_cancelled')).toContain('CANCELLED');
    });

    it('shows why a call ended when it was not its result', () => {
      const text = renderWaterfall([
        span({
          id: '1',
          name: 'open_call',
          at: [0, 10],
          status: { code: 2, message: 'no result' },
          attributes: { 'tooltrace.end_reason': 'shutdown' },
        }),
        span({
          id: '2',
          name: 'done',
          at: [0, 10],
          attributes: { 'tooltrace.end_reason': 'result' },
        }),
      ]);
      expect(rowOf(text, 'open_call')).toContain('ERROR  (shutdown)');
      expect(rowOf(text, 'done')).not.toContain('(result)');
    });

    it('folds a multi-line error message onto the row', () => {
      const text = renderWaterfall([
        span({
          id: '1',
          name: 'crashed',
          at: [0, 10],
          status: { code: 2, message: 'Error: boom\n    at tool (tool.ts:1:1)\n' },
        }),
      ]);
      expect(rows(text)).toHaveLength(1);
      expect(rowOf(text, 'crashed')).toMatch(/"Error: boom at tool \(tool\.ts:1:1\)"$/);
    });
  });

  describe('the stream summary', () => {
    it('counts partials with their size and first arrival, progress with its last value', () => {
      const text = renderWaterfall([
        span({
          id: '1',
          name: 'write_report',
          at: [0, 1800],
          events: 4,
          attributes: {
            'tooltrace.stream.partial.count': 4,
            'tooltrace.stream.partial.bytes': 289,
            'tooltrace.stream.time_to_first_partial_ms': 451.2,
          },
        }),
        span({
          id: '2',
          name: 'index_files',
          at: [0, 2000],
          events: 64,
          attributes: {
            'tooltrace.stream.progress.count': 100,
            'tooltrace.stream.last_progress': 1,
            'tooltrace.stream.events.coalesced': 36,
          },
        }),
        span({
          id: '3',
          name: 'one_partial',
          at: [0, 10],
          events: 1,
          attributes: {
            'tooltrace.stream.partial.count': 1n,
            'tooltrace.stream.partial.bytes': 4096,
            'tooltrace.stream.time_to_first_partial_ms': 0.5,
          },
        }),
        span({
          id: '4',
          name: 'unknown_progress',
          at: [0, 10],
          attributes: {
            'tooltrace.stream.progress.count': 2,
            'tooltrace.stream.last_progress': -1,
          },
        }),
      ]);
      expect(rowOf(text, 'write_report')).toMatch(
        / 1\.80s {2}OK {2}4 partials \(289 B\), first after 451ms, 4 span events$/,
      );
      expect(rowOf(text, 'index_files')).toMatch(
        / 2\.00s {2}OK {2}100 progress to 100%, 36 coalesced, 64 span events$/,
      );
      expect(rowOf(text, 'one_partial')).toMatch(
        / 10ms {2}OK {2}1 partial \(4\.0 KB\), first after 500µs, 1 span event$/,
      );
      expect(rowOf(text, 'unknown_progress')).toMatch(/ OK {2}2 progress$/);
    });

    it('leaves the summary out for a call that streamed nothing', () => {
      const text = renderWaterfall([span({ id: '1', name: 'lookup_weather', at: [0, 12] })]);
      expect(rowOf(text, 'lookup_weather')).toMatch(/ 12ms {2}OK$/);
    });
  });

  describe('colour', () => {
    const spans = [
      span({ id: '1', name: 'ok_call', at: [0, 10] }),
      span({ id: '2', name: 'failed', at: [0, 10], status: { code: 2, message: 'boom' } }),
      span({
        id: '3',
        name: 'cancelled',
        at: [0, 10],
        status: { code: 2, message: 'deadline' },
        attributes: { 'tooltrace.tool.cancelled': true, 'tooltrace.stream.partial.count': 1 },
      }),
    ];

    it('writes no escape codes by default or with colour off', () => {
      expect(renderWaterfall(spans)).not.toContain('\x1b');
      expect(renderWaterfall(spans, { color: false })).not.toContain('\x1b');
    });

    it('colours the status words, bars and header with colour on', () => {
      const text = renderWaterfall(spans, { color: true });
      expect(text).toContain('\x1b[');
      expect(text).toContain('\x1b[32mOK\x1b[39m');
      expect(text).toContain('\x1b[31mERROR\x1b[39m');
      expect(text).toContain('\x1b[33mCANCELLED\x1b[39m');
      // eslint-disable-next-line no-control-regex
      expect(text.replace(/\x1b\[\d+m/g, '')).toBe(renderWaterfall(spans));
    });
  });
});

describe('formatDuration()', () => {
  it('writes microseconds, milliseconds and seconds', () => {
    expect(formatDuration(850_000n)).toBe('850µs');
    expect(formatDuration(0n)).toBe('0µs');
    expect(formatDuration(1_234_567n)).toBe('1.2ms');
    expect(formatDuration(12_345_678n)).toBe('12ms');
    expect(formatDuration(999_000_000n)).toBe('999ms');
    expect(formatDuration(1_520_000_000n)).toBe('1.52s');
    expect(formatDuration(61_000_000_000n)).toBe('61.00s');
  });
});

describe('renderWaterfall() with a width', () => {
  const spans = [
    span({ id: '1', name: 'execute_tool a_tool_with_a_rather_long_name', at: [0, 900] }),
    span({
      id: '2',
      name: 'execute_tool fetch',
      parent: '1',
      at: [100, 400],
      status: { code: 2, message: 'the upstream service answered 503 after three retries' },
    }),
  ];

  it('cuts every line to the width, painting after the cut', () => {
    const text = renderWaterfall(spans, { color: true, width: 50 });
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(stripVTControlCharacters(line).length, line).toBeLessThanOrEqual(50);
      // Every escape code that opens a colour is closed again on the same line.
      expect((line.split('\x1b[').length - 1) % 2).toBe(0);
    }
    const plain = stripVTControlCharacters(text).split('\n');
    // The label column narrows to what leaves room for bar, duration and status.
    expect(plain[1]).toMatch(/^ {2}execute_tool a_… {2}█+ +900ms {2}OK$/);
    expect(plain[2]).toMatch(/^ {2}└─ execute_tool… +█+ +300ms {2}ERROR {2}"th…$/);
  });

  it('draws the same rows as without a width when they fit', () => {
    expect(renderWaterfall(spans, { width: 1000 })).toBe(renderWaterfall(spans));
  });
});

describe('terminalWidth()', () => {
  const stream = (columns?: number): NodeJS.WritableStream =>
    Object.assign(new PassThrough(), columns === undefined ? {} : { columns });

  it("takes a terminal's width, else COLUMNS, else 80", () => {
    expect(terminalWidth(stream(132), { COLUMNS: '60' })).toBe(132);
    expect(terminalWidth(stream(), { COLUMNS: '60' })).toBe(60);
    expect(terminalWidth(stream(), {})).toBe(80);
    expect(terminalWidth(stream(), { COLUMNS: 'wide' })).toBe(80);
  });
});
