/**
 * Emits per second to one subscriber: tooltrace's EventBus, `node:events` EventEmitter and
 * emittery, measured side by side in one run. Run with `npm run bench:bus`.
 *
 * Rounds alternate between the contenders so machine noise hits them alike; the best round of
 * each is reported.
 */
import { EventEmitter } from 'node:events';
import Emittery from 'emittery';
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventBus, dateFromUnixNano, newEventId, nowUnixNano } from '../src/index.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const payload = { tool_name: 'search', tool_id: 'tc_1', turn_id: 't1', sequence: 1, payload: 'x' };

type Contender = { name: string; run: (count: number) => Promise<number> | number };

let sink = 0;

function ratePerSecond(count: number, startNs: bigint): number {
  return count / (Number(process.hrtime.bigint() - startNs) / 1e9);
}

const contenders: Contender[] = [
  {
    name: 'tooltrace EventBus',
    run(count) {
      const bus = new EventBus();
      bus.subscribe('tool.stream.partial', (event) => {
        sink += event.causation.sequence;
      });
      const start = process.hrtime.bigint();
      for (let index = 0; index < count; index += 1) bus.emit('tool.stream.partial', payload);
      return ratePerSecond(count, start);
    },
  },
  {
    name: 'node:events EventEmitter',
    run(count) {
      const emitter = new EventEmitter();
      emitter.on('tool.stream.partial', (value: typeof payload) => {
        sink += value.sequence;
      });
      const start = process.hrtime.bigint();
      for (let index = 0; index < count; index += 1) emitter.emit('tool.stream.partial', payload);
      return ratePerSecond(count, start);
    },
  },
  {
    name: 'emittery',
    async run(count) {
      const emitter = new Emittery();
      emitter.on('tool.stream.partial', (value) => {
        sink += (value as typeof payload).sequence;
      });
      const start = process.hrtime.bigint();
      for (let index = 0; index < count; index += 1) {
        await emitter.emit('tool.stream.partial', payload);
      }
      return ratePerSecond(count, start);
    },
  },
];

/** Nanoseconds per call of the pieces an emit is made of, to show where the time goes. */
function breakdown(count: number): [string, number][] {
  const storage = new AsyncLocalStorage<object>();
  const frame = {};
  const parts: [string, () => void][] = [
    ['event id (pooled random hex)', () => void (sink += newEventId().length)],
    ['hrtime clock (bigint ns)', () => void (sink += Number(nowUnixNano() & 1n))],
    [
      'Date from ns (on first read only)',
      () => void (sink += dateFromUnixNano(1_777_000_000_000_000_000n).getDate()),
    ],
    ['AsyncLocalStorage.run', () => storage.run(frame, () => void (sink += 1))],
  ];
  return parts.map(([name, part]) => {
    const start = process.hrtime.bigint();
    for (let index = 0; index < count; index += 1) part();
    return [name, Number(process.hrtime.bigint() - start) / count];
  });
}

async function main(): Promise<void> {
  const best = new Map<string, number>();
  for (const contender of contenders) await contender.run(EVENTS / 10); // warm-up
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const contender of contenders) {
      const rate = await contender.run(EVENTS);
      best.set(contender.name, Math.max(best.get(contender.name) ?? 0, rate));
    }
  }
  const ours = best.get('tooltrace EventBus')!;
  const bare = best.get('node:events EventEmitter')!;
  const emittery = best.get('emittery')!;
  console.log(`emits/s to one subscriber, best of ${ROUNDS} rounds of ${EVENTS}:`);
  for (const [name, rate] of best) {
    console.log(`  ${name.padEnd(26)} ${Math.round(rate).toLocaleString('en-US').padStart(12)}`);
  }
  console.log(`ratio tooltrace / emittery:     ${(ours / emittery).toFixed(2)}x (target >= 3x)`);
  console.log(`ratio tooltrace / EventEmitter: ${(ours / bare).toFixed(2)}x`);
  console.log(`where an emit's ${(1e9 / ours).toFixed(0)} ns go (ns per call, measured alone):`);
  for (const [name, nanos] of breakdown(EVENTS)) {
    console.log(`  ${name.padEnd(30)} ${nanos.toFixed(0).padStart(5)}`);
  }
  if (sink === 0) console.log('(no events were delivered)');
}

await main();
