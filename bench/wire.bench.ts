/**
 * Wire codec throughput, measured side by side in one run on the same generated NDJSON: tool
 * calls of 12 events (invoke, 10 stream events, result), about 320 bytes a line.
 *
 *   npx tsx bench/wire.bench.ts [toolCalls]
 *
 * Rows: `JSON.parse` of each line as a string (the floor), `decodeEnvelope` of each line as a
 * string, the `LineSplitter` alone over 64 KiB chunks, the splitter with a plain UTF-8 decode and
 * `JSON.parse` of each line (the floor for bytes), the splitter followed by `decodeEnvelope` of
 * each line's bytes (what the sidecar does), and `encodeEnvelope` against `JSON.stringify`.
 */
import { Buffer } from 'node:buffer';
import { EventBus, type BusEvent } from '../src/bus/index.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  type ToolCall,
  type ToolResult,
} from '../src/events/index.js';
import { LineSplitter, decodeEnvelope, encodeEnvelope } from '../src/wire/index.js';

const TOOL_CALLS = Number(process.argv[2] ?? 10_000);
const ROUNDS = 7;
const CHUNK_BYTES = 64 * 1024;

function generateEvents(toolCalls: number): BusEvent[] {
  const bus = new EventBus({ ringSize: 0 });
  const events: BusEvent[] = [];
  bus.subscribeAll((event) => void events.push(event));
  bus.setDefaultCausation({ sessionId: 's1', agentId: 'a1', depth: 0 });
  for (let call = 0; call < toolCalls; call += 1) {
    const id = `tc_${call}`;
    const invoke: ToolCall = {
      id,
      name: 'search',
      arguments: { query: `flights to Lisbon ${call}`, limit: 5 },
      turnId: 't1',
    };
    const invokeEvent = bus.emit(TOOL_INVOKE, invoke, { source: 'agent' });
    const causation = { parentId: invokeEvent.id, parentSeq: invokeEvent.causation.sequence };
    for (let sequence = 1; sequence <= 10; sequence += 1) {
      const progress = sequence % 2 === 0;
      bus.emit(
        progress ? TOOL_STREAM_PROGRESS : TOOL_STREAM_PARTIAL,
        {
          tool_name: 'search',
          tool_id: id,
          turn_id: 't1',
          sequence,
          ...(progress ? { progress: sequence / 10 } : {}),
          payload: progress ? `page ${sequence}` : `TAP 1h05 €89`,
        },
        { source: 'search', causation },
      );
    }
    const result: ToolResult = { id, name: 'search', output: '5 flights found', turnId: 't1' };
    bus.emit(TOOL_RESULT, result, { source: 'search', causation });
  }
  return events;
}

interface Task {
  name: string;
  /** Handles every line once and returns how many it handled. */
  work: () => number;
  rates: number[];
}

/**
 * Runs every task once per round, interleaved so that a noisy neighbour slows all rows alike,
 * and keeps each task's median rate.
 */
function measureAll(tasks: Task[], lines: number): Map<string, number> {
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const task of tasks) {
      const started = process.hrtime.bigint();
      const handled = task.work();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (handled !== lines) throw new Error(`${task.name}: handled ${handled} of ${lines} lines`);
      task.rates.push(lines / seconds);
    }
  }
  const medians = new Map<string, number>();
  for (const task of tasks) {
    const sorted = [...task.rates].sort((left, right) => left - right);
    medians.set(task.name, sorted[Math.floor(sorted.length / 2)]!);
  }
  return medians;
}

const events = generateEvents(TOOL_CALLS);
const lines = events.map((event) => encodeEnvelope(event));
const ndjson = Buffer.from(`${lines.join('\n')}\n`);
const chunks: Buffer[] = [];
for (let offset = 0; offset < ndjson.length; offset += CHUNK_BYTES) {
  chunks.push(ndjson.subarray(offset, offset + CHUNK_BYTES));
}
const lineCount = lines.length;

function splitAll(onLine: (line: Uint8Array) => void): number {
  let count = 0;
  const splitter = new LineSplitter({
    onLine: (line) => {
      count += 1;
      onLine(line);
    },
  });
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return count;
}

function task(name: string, work: () => number): Task {
  return { name, work, rates: [] };
}

const FLOOR = 'JSON.parse per line (floor)';
const STRINGIFY = 'JSON.stringify of the same envelope';
const decodeTasks = [
  task(FLOOR, () => {
    let count = 0;
    for (const line of lines) if (JSON.parse(line) !== null) count += 1;
    return count;
  }),
  task('decodeEnvelope per line (string)', () => {
    let count = 0;
    for (const line of lines) if (decodeEnvelope(line).ok) count += 1;
    return count;
  }),
  task('LineSplitter alone (64 KiB chunks)', () => splitAll(() => {})),
  task('LineSplitter + TextDecoder + JSON.parse', () => {
    let parsed = 0;
    const utf8 = new TextDecoder('utf-8', { fatal: true });
    const count = splitAll((line) => {
      if (JSON.parse(utf8.decode(line)) !== null) parsed += 1;
    });
    return Math.min(count, parsed);
  }),
  task('LineSplitter + decodeEnvelope (bytes)', () => {
    let rejected = 0;
    const count = splitAll((line) => {
      if (!decodeEnvelope(line).ok) rejected += 1;
    });
    return count - rejected;
  }),
];
const encodeTasks = [
  task(STRINGIFY, () => {
    let count = 0;
    for (const event of events) {
      const causation = event.causation;
      const line = JSON.stringify({
        seq: causation.sequence,
        ts: event.timestamp.toISOString(),
        type: event.type,
        event_id: event.id,
        source: event.source,
        parent_id: causation.parentId,
        parent_seq: causation.parentSeq,
        session_id: causation.sessionId,
        agent_id: causation.agentId,
        depth: causation.depth,
        payload: event.payload,
      });
      if (line.length > 0) count += 1;
    }
    return count;
  }),
  task('encodeEnvelope', () => {
    let count = 0;
    for (const event of events) if (encodeEnvelope(event).length > 0) count += 1;
    return count;
  }),
];

const decodeRates = measureAll(decodeTasks, lineCount);
const encodeRates = measureAll(encodeTasks, lineCount);

const averageBytes = Math.round(ndjson.length / lineCount);
console.log(
  `wire bench: ${TOOL_CALLS} tool calls x 12 events = ${lineCount} lines, ` +
    `${averageBytes} bytes/line on average, median of ${ROUNDS} interleaved rounds, ` +
    `Node ${process.version}\n`,
);
const width = Math.max(...[...decodeTasks, ...encodeTasks].map((entry) => entry.name.length));
printTable(decodeRates, FLOOR, 'the floor');
console.log('');
printTable(encodeRates, STRINGIFY, 'JSON.stringify');

function printTable(rates: Map<string, number>, baseline: string, baselineName: string): void {
  const base = rates.get(baseline)!;
  for (const [name, rate] of rates) {
    const perLine = (1e9 / rate).toFixed(0).padStart(6);
    console.log(
      `${name.padEnd(width)}  ${format(rate)} lines/s  ${perLine} ns/line  ` +
        `${(base / rate).toFixed(2)}x ${baselineName}'s time per line`,
    );
  }
}

function format(rate: number): string {
  return Math.round(rate).toLocaleString('en-US').padStart(11);
}
