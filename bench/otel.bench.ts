/**
 * What tracing tool calls costs, measured side by side in one run (`npm run bench:otel`):
 *
 * (a) bus + bridge alone: tool calls answered by `bridge` from a `tool.invoke` handler;
 * (b) the same with `traceToolCalls` subscribed, exporting through a BatchSpanProcessor into an
 *     exporter that reports success at once (so serialization and I/O are out of the picture);
 * (c) a hand-written baseline making the same spans and span events directly with the SDK, no
 *     bus at all, into the same processor and exporter;
 * (d) heap held per open call (invoke + 10 stream events, no result yet) against a bare SDK
 *     span with the same attributes and 10 events.
 *
 * For reference, (c′) runs the hand-written spans of (c) from a naive bus subscriber on the bus
 * of (a): what the SDK work alone costs in the same asynchronous setting.
 *
 * Per-call cost comes from calls without stream events; per-event cost from the difference
 * between calls with and without them. Every figure is the least CPU time (user + system) of
 * interleaved rounds: on a shared machine, other processes only ever add time, so the minimum is
 * the stablest estimate of the work itself. (No forced collection before a run: a full GC leaves
 * the heap and caches cold and makes every side look slower than it runs in practice.) The bars: (b) − (a) at most 2 × (c) per stream
 * event, and an open call at most 1.5 × a bare SDK span in heap.
 */
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  EventBus,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  bridge,
  type ChannelTool,
  type ToolCall,
  type ToolEvent,
  type ToolStreamPartial,
} from '../src/index.js';
import { traceToolCalls, type ToolCallTracing } from '../src/otel/index.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 4_000);
const EVENTS_PER_CALL = Number(process.env.BENCH_EVENTS ?? 10);
const LONG_STREAM = Number(process.env.BENCH_LONG_STREAM ?? 1_000);
const LONG_CALLS = Number(process.env.BENCH_LONG_CALLS ?? 40);
const OPEN_CALLS = Number(process.env.BENCH_OPEN_CALLS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Reports every batch exported at once: the pipeline without serialization or I/O. */
class NoopExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function newProvider(): BasicTracerProvider {
  // A queue large enough that nothing is dropped: dropped spans would make a side look cheaper.
  const processor = new BatchSpanProcessor(new NoopExporter(), {
    maxQueueSize: 1_000_000,
    maxExportBatchSize: 512,
    scheduledDelayMillis: 1_000,
  });
  return new BasicTracerProvider({ spanProcessors: [processor] });
}

// eslint-disable-next-line @typescript-eslint/require-await
async function* generate(count: number): AsyncGenerator<ToolEvent> {
  for (let index = 0; index < count; index += 1) yield { kind: 'partial', payload: 'token ' };
  yield { kind: 'complete', payload: 'done' };
}

/** A bus whose `tool.invoke` handler runs bridge, as a tool plugin does. */
function newBus(eventsPerCall: () => number): {
  bus: EventBus;
  run: (calls: number) => Promise<void>;
} {
  const bus = new EventBus({ ringSize: 0 });
  let running: Promise<void> = Promise.resolve();
  const tool: ChannelTool = { name: 'bench', stream: () => generate(eventsPerCall()) };
  bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => {
    running = bridge(bus, tool, event.payload);
  });
  bus.setDefaultCausation({ sessionId: 'bench-session', agentId: 'bench-agent' });
  return {
    bus,
    async run(calls: number): Promise<void> {
      for (let index = 0; index < calls; index += 1) {
        bus.emit<ToolCall>(TOOL_INVOKE, { id: `tc_${index}`, name: 'bench', arguments: {} });
        await running;
      }
    },
  };
}

/** The attributes tooltrace puts on a span, for the hand-written baseline to match. */
function startAttributes(index: number): Record<string, string | number> {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'bench',
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.call.id': `tc_${index}`,
    'gen_ai.conversation.id': 'bench-session',
    'gen_ai.agent.id': 'bench-agent',
    'tooltrace.depth': 0,
    'tooltrace.event.id': '0123456789abcdef0123456789abcdef',
    'tooltrace.event.sequence': index,
  };
}

/** (c): the same spans and events, made by hand with the SDK. */
function handWritten(tracer: Tracer, calls: number, events: number): void {
  for (let index = 0; index < calls; index += 1) {
    const span = tracer.startSpan('execute_tool bench', {
      kind: SpanKind.INTERNAL,
      attributes: startAttributes(index),
    });
    for (let sequence = 1; sequence <= events; sequence += 1) {
      span.addEvent(TOOL_STREAM_PARTIAL, {
        'tooltrace.stream.sequence': sequence,
        'tooltrace.stream.payload.bytes': 6,
      });
    }
    span.setAttributes({
      'tooltrace.stream.partial.count': events,
      'tooltrace.stream.progress.count': 0,
      'tooltrace.stream.partial.bytes': events * 6,
      'tooltrace.stream.events.recorded': events,
      'tooltrace.stream.events.coalesced': 0,
      'tooltrace.end_reason': 'result',
    });
    span.setStatus({ code: SpanStatusCode.OK });
    span.end();
  }
}

/**
 * CPU time (user + system, in ns) a run takes: on a shared machine it varies far less than
 * wall time, and the work measured here never waits for I/O.
 */
async function timed(run: () => Promise<void> | void): Promise<number> {
  const start = process.cpuUsage();
  await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) * 1_000;
}

function least(values: number[]): number {
  return Math.min(...values);
}

interface Side {
  name: string;
  /** Runs `calls` calls of `events` stream events each. */
  run(calls: number, events: number): Promise<void> | void;
}

/** (c′): the spans of (c) from a subscriber that keeps nothing but the open span per call. */
function subscribeHandWritten(bus: EventBus, tracer: Tracer): void {
  const open = new Map<string, Span>();
  bus.subscribeAll((event) => {
    if (event.type === TOOL_INVOKE) {
      open.set(
        event.id,
        tracer.startSpan('execute_tool bench', {
          kind: SpanKind.INTERNAL,
          attributes: startAttributes(event.causation.sequence),
        }),
      );
    } else if (event.type === TOOL_STREAM_PARTIAL) {
      const payload = event.payload as ToolStreamPartial;
      open.get(event.causation.parentId)?.addEvent(TOOL_STREAM_PARTIAL, {
        'tooltrace.stream.sequence': payload.sequence,
        'tooltrace.stream.payload.bytes': 6,
      });
    } else if (event.type === TOOL_RESULT) {
      const span = open.get(event.causation.parentId);
      if (span === undefined) return;
      open.delete(event.causation.parentId);
      span.setAttributes({ 'tooltrace.end_reason': 'result' });
      span.setStatus({ code: SpanStatusCode.OK });
      span.end();
    }
  });
}

function sides(): { sides: Side[]; tracing: ToolCallTracing } {
  let events = 0;
  const plain = newBus(() => events);
  const traced = newBus(() => events);
  const naive = newBus(() => events);
  const tracing = traceToolCalls(traced.bus, { tracerProvider: newProvider() });
  const tracer = newProvider().getTracer('bench');
  subscribeHandWritten(naive.bus, newProvider().getTracer('bench'));
  return {
    tracing,
    sides: [
      {
        name: '(a) bus + bridge',
        run: (calls, count) => {
          events = count;
          return plain.run(calls);
        },
      },
      {
        name: '(b) bus + bridge + traceToolCalls',
        run: (calls, count) => {
          events = count;
          return traced.run(calls);
        },
      },
      {
        name: '(c) hand-written SDK spans',
        run: (calls, count) => handWritten(tracer, calls, count),
      },
      {
        name: "(c') bus + bridge + naive SDK subscriber",
        run: (calls, count) => {
          events = count;
          return naive.run(calls);
        },
      },
    ],
  };
}

/** Median ns per call (no stream events) and per stream event, for each side. */
async function costs(
  all: Side[],
  calls: number,
  events: number,
): Promise<{ perCall: number[]; perEvent: number[] }> {
  const empty = all.map(() => [] as number[]);
  const full = all.map(() => [] as number[]);
  for (const side of all) {
    await side.run(calls, 0);
    await side.run(calls, events);
  }
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [index, side] of all.entries()) {
      empty[index]!.push(await timed(() => side.run(calls, 0)));
      full[index]!.push(await timed(() => side.run(calls, events)));
    }
  }
  const perCall = empty.map((times) => least(times) / calls);
  const perEvent = full.map(
    (times, index) => (least(times) - least(empty[index]!)) / (calls * events),
  );
  return { perCall, perEvent };
}

function heapUsed(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** (d): bytes held per open call, traced, against a bare SDK span with the same content. */
function heapPerOpenCall(): { traced: number; bare: number } {
  const provider = newProvider();
  const bus = new EventBus({ ringSize: 0 });
  const tracing = traceToolCalls(bus, { tracerProvider: provider, maxOpenSpans: OPEN_CALLS * 2 });
  const before = heapUsed();
  for (let index = 0; index < OPEN_CALLS; index += 1) {
    const invoke = bus.emit<ToolCall>(TOOL_INVOKE, {
      id: `tc_${index}`,
      name: 'bench',
      arguments: {},
    });
    const causation = { parentId: invoke.id };
    for (let sequence = 1; sequence <= 10; sequence += 1) {
      bus.emit(
        TOOL_STREAM_PARTIAL,
        { tool_name: 'bench', tool_id: `tc_${index}`, turn_id: '', sequence, payload: 'token ' },
        { causation },
      );
    }
  }
  const traced = (heapUsed() - before) / OPEN_CALLS;
  if (tracing.stats().openSpans !== OPEN_CALLS) throw new Error('calls were not all open');
  void tracing.shutdown();

  const tracer = newProvider().getTracer('bench');
  const spans = [];
  const beforeBare = heapUsed();
  for (let index = 0; index < OPEN_CALLS; index += 1) {
    const span = tracer.startSpan('execute_tool bench', {
      kind: SpanKind.INTERNAL,
      attributes: startAttributes(index),
    });
    for (let sequence = 1; sequence <= 10; sequence += 1) {
      span.addEvent(TOOL_STREAM_PARTIAL, {
        'tooltrace.stream.sequence': sequence,
        'tooltrace.stream.payload.bytes': 6,
      });
    }
    spans.push(span);
  }
  const bare = (heapUsed() - beforeBare) / OPEN_CALLS;
  if (spans.length !== OPEN_CALLS) throw new Error('unreachable');
  return { traced, bare };
}

async function main(): Promise<void> {
  const { sides: all, tracing } = sides();
  const short = await costs(all, CALLS, EVENTS_PER_CALL);
  const long = await costs(all, LONG_CALLS, LONG_STREAM);
  const memory = heapPerOpenCall();
  if (process.env.BENCH_DEBUG) console.log(tracing.stats());
  await tracing.shutdown();

  const ns = (value: number): string => `${value.toFixed(0).padStart(7)} ns`;
  console.log(
    `cost per tool call and per stream event, least CPU time of ${ROUNDS} interleaved rounds ` +
      `(no-op exporter, BatchSpanProcessor):`,
  );
  console.log(
    `${''.padEnd(42)} ${'per call'.padStart(10)} ${`per event (${EVENTS_PER_CALL}/call)`.padStart(22)} ${`per event (${LONG_STREAM}/call)`.padStart(22)}`,
  );
  for (const [index, side] of all.entries()) {
    console.log(
      `${side.name.padEnd(42)} ${ns(short.perCall[index]!)} ${ns(short.perEvent[index]!).padStart(22)} ${ns(long.perEvent[index]!).padStart(22)}`,
    );
  }
  const [a, b, c, naive] = [0, 1, 2, 3];
  const addedPerEvent = short.perEvent[b]! - short.perEvent[a]!;
  const addedPerCall = short.perCall[b]! - short.perCall[a]!;
  const addedLong = long.perEvent[b]! - long.perEvent[a]!;
  console.log(
    `(b) − (a) per event:  ${ns(addedPerEvent)}  (long streams: ${ns(addedLong).trim()})`,
  );
  console.log(`(b) − (a) per call:   ${ns(addedPerCall)}`);
  console.log(
    `ratio ((b) − (a)) / (c) per event: ${(addedPerEvent / short.perEvent[c]!).toFixed(2)} (bar <= 2.00)`,
  );
  console.log(
    `ratio ((b) − (a)) / (c) per event, ${LONG_STREAM}/call: ${(addedLong / long.perEvent[c]!).toFixed(2)}`,
  );
  console.log(
    `ratio ((b) − (a)) / (c) per call:  ${(addedPerCall / short.perCall[c]!).toFixed(2)}`,
  );
  const naivePerEvent = short.perEvent[naive]! - short.perEvent[a]!;
  const naivePerCall = short.perCall[naive]! - short.perCall[a]!;
  console.log(
    `for reference, ((b) − (a)) / ((c') − (a)): per event ${(addedPerEvent / naivePerEvent).toFixed(2)}, ` +
      `per call ${(addedPerCall / naivePerCall).toFixed(2)}`,
  );
  console.log(
    `(d) heap per open call (10 stream events): traced ${memory.traced.toFixed(0)} B, ` +
      `bare SDK span ${memory.bare.toFixed(0)} B, ratio ${(memory.traced / memory.bare).toFixed(2)} (bar <= 1.50)`,
  );
}

await main();
