/**
 * Stream events per second through bridge → bus → one subscriber, against a bare `for await`
 * loop over the same generator with AsyncLocalStorage active, measured side by side in one run.
 * The bar: bridge reaches at least half the bare loop's rate. A third line, the same loop with a
 * hand-written `bus.emit` per event, is the floor any bridge sits on: the gap between it and
 * bridge is bridge's own cost, the gap between it and the bare loop is the bus's.
 * Run with `npm run bench:bridge`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  EventBus,
  TOOL_INVOKE,
  TOOL_STREAM_PARTIAL,
  bridge,
  type ChannelTool,
  type ToolCall,
  type ToolEvent,
  type ToolStreamPartial,
} from '../src/index.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);

// A full collection before every timed run keeps one side's garbage from being billed to the other.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

// No await inside: a tool whose events are ready at once is the case where overhead shows most.
// eslint-disable-next-line @typescript-eslint/require-await
async function* generate(count: number): AsyncGenerator<ToolEvent> {
  for (let index = 0; index < count; index += 1) {
    yield { kind: 'partial', payload: index };
  }
  yield { kind: 'complete', payload: count };
}

/** The baseline: what iterating the generator costs once AsyncLocalStorage is enabled. */
function bareLoop(storage: AsyncLocalStorage<object>): Promise<number> {
  return storage.run({ frame: true }, async () => {
    let seen = 0;
    for await (const event of generate(EVENTS)) {
      if (event.kind === 'partial') seen += 1;
    }
    return seen;
  });
}

/**
 * A bus with one partial subscriber; `start` runs from its tool.invoke handler, as a plugin
 * runs bridge, so the dispatch frame is active as in real use.
 */
async function fromInvokeHandler(start: (bus: EventBus, call: ToolCall) => Promise<void>) {
  const bus = new EventBus();
  let seen = 0;
  bus.subscribe(TOOL_STREAM_PARTIAL, () => {
    seen += 1;
  });
  let running: Promise<void> = Promise.resolve();
  bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => {
    running = start(bus, event.payload);
  });
  bus.emit<ToolCall>(TOOL_INVOKE, { id: 'tc_1', name: 'bench', arguments: {} });
  await running;
  return seen;
}

function throughBridge(): Promise<number> {
  const tool: ChannelTool = { name: 'bench', stream: () => generate(EVENTS) };
  return fromInvokeHandler((bus, call) => bridge(bus, tool, call));
}

function handWrittenEmit(): Promise<number> {
  return fromInvokeHandler(async (bus, call) => {
    let sequence = 0;
    for await (const event of generate(EVENTS)) {
      if (event.kind !== 'partial') continue;
      sequence += 1;
      const payload: ToolStreamPartial = {
        tool_name: 'bench',
        tool_id: call.id,
        turn_id: '',
        sequence,
        payload: event.payload,
      };
      bus.emit(TOOL_STREAM_PARTIAL, payload);
    }
  });
}

async function rate(run: () => Promise<number>): Promise<number> {
  collectGarbage();
  const start = process.hrtime.bigint();
  const seen = await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (seen !== EVENTS) throw new Error(`expected ${EVENTS} events, saw ${seen}`);
  return seen / seconds;
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const storage = new AsyncLocalStorage<object>();
  const contenders = [
    { name: 'bare for-await loop (ALS active)', run: () => bareLoop(storage), rates: [0] },
    { name: 'for-await + hand-written bus.emit', run: handWrittenEmit, rates: [0] },
    { name: 'bridge → bus → one subscriber', run: throughBridge, rates: [0] },
  ];
  // Warm every path so the JIT has compiled them before anything is measured.
  for (const contender of contenders) {
    await contender.run();
    contender.rates = [];
  }
  // Interleaved rounds, so drift (CPU frequency, a noisy neighbour) hits all sides alike.
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const contender of contenders) contender.rates.push(await rate(contender.run));
  }
  const [bare, hand, bridged] = contenders.map((contender) => median(contender.rates)) as [
    number,
    number,
    number,
  ];
  const format = (value: number): string => Math.round(value).toLocaleString('en-US');
  console.log(`stream events/s, median of ${ROUNDS} rounds of ${format(EVENTS)} partial events:`);
  for (const contender of contenders) {
    console.log(`  ${contender.name.padEnd(36)} ${format(median(contender.rates)).padStart(10)}`);
  }
  console.log(
    `ratio bridge / bare loop:              ${(bridged / bare).toFixed(2)} (bar >= 0.50)`,
  );
  console.log(`ratio bridge / hand-written emit loop: ${(bridged / hand).toFixed(2)}`);
}

await main();
