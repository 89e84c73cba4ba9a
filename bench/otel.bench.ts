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
 * (f) is (b) with a real MeterProvider recording every instrument; the bar: recording metrics
 * adds at most 15 % to tracing's own per-event cost.
 *
 * For reference, (c′) runs the hand-written spans of (c) from a naive bus subscriber on the bus
 * of (a): what the SDK work alone costs in the same asynchronous setting.
 *
 * (g) is the path of `tooltrace sidecar`: decoded journal lines (per call an invoke, ten stream
 * events and a result, every id a string of its own as a decoder makes them) emitted with
 * `emitEvent` on a bus without dispatch frames, traced with derived ids; next to (g′), a naive
 * subscriber on the same bus making the same spans (same attributes, span events and status)
 * with the SDK directly, as the straightforward pipeline the sidecar is compared with does.
 *
 * (e) live updates: `BENCH_LIVE_CALLS` calls kept open for `BENCH_LIVE_SECONDS` of real time
 * while a timer feeds each one a partial every `BENCH_LIVE_EVERY_MS`, traced with
 * `liveUpdates` on (the default 1 s interval: every call is snapshotted once a second, since
 * events keep coming) and off, next to the bus alone; spans go through a BatchSpanProcessor
 * into an exporter that serializes them to OTLP protobuf, as a real exporter must (the in-flight
 * snapshots are extra spans to serialize). Cost per stream event is the CPU time of the whole
 * run divided by the stream events; a snapshot's cost is the difference between on and off
 * divided by the snapshots exported. The bar: on at most 1.25 × off per stream event.
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
// A dependency of the OTLP exporters: the serializer they run before sending.
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CollectedMetricReader } from '../src/demo/collected-metric-reader.js';
import {
  EventBus,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  bridge,
  newEventId,
  type BusEvent,
  type Causation,
  type EventInit,
  type ChannelTool,
  type ToolCall,
  type ToolEvent,
  type ToolStreamPartial,
} from '../src/index.js';
import {
  DerivedIdGenerator,
  traceReplay,
  traceToolCalls,
  type ToolCallTracing,
} from '../src/otel/index.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 4_000);
const EVENTS_PER_CALL = Number(process.env.BENCH_EVENTS ?? 10);
const LONG_STREAM = Number(process.env.BENCH_LONG_STREAM ?? 1_000);
const LONG_CALLS = Number(process.env.BENCH_LONG_CALLS ?? 40);
const OPEN_CALLS = Number(process.env.BENCH_OPEN_CALLS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const LIVE_CALLS = Number(process.env.BENCH_LIVE_CALLS ?? 1_000);
const LIVE_SECONDS = Number(process.env.BENCH_LIVE_SECONDS ?? 4);
const LIVE_EVERY_MS = Number(process.env.BENCH_LIVE_EVERY_MS ?? 10);
const LIVE_ROUNDS = Number(process.env.BENCH_LIVE_ROUNDS ?? 5);
const REPLAY_CALLS = Number(process.env.BENCH_REPLAY_CALLS ?? 5_000);

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

/** Serializes every batch to OTLP protobuf, as the OTLP exporter does, and sends it nowhere. */
class SerializingExporter implements SpanExporter {
  bytes = 0;
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.bytes += ProtobufTraceSerializer.serializeRequest(spans)?.length ?? 0;
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function newProvider(idGenerator?: DerivedIdGenerator): BasicTracerProvider {
  // A queue large enough that nothing is dropped: dropped spans would make a side look cheaper.
  const processor = new BatchSpanProcessor(new NoopExporter(), {
    maxQueueSize: 1_000_000,
    maxExportBatchSize: 512,
    scheduledDelayMillis: 1_000,
  });
  return new BasicTracerProvider({
    spanProcessors: [processor],
    ...(idGenerator === undefined ? {} : { idGenerator }),
  });
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
  const metered = newBus(() => events);
  const tracing = traceToolCalls(traced.bus, { tracerProvider: newProvider() });
  // (f): the same with the SDK's MeterProvider recording every instrument (cumulative, read
  // never: the cost of recording, not of exporting).
  traceToolCalls(metered.bus, {
    tracerProvider: newProvider(),
    meterProvider: new MeterProvider({ readers: [new CollectedMetricReader()] }),
  });
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
      {
        name: '(f) (b) + metrics (SDK MeterProvider)',
        run: (calls, count) => {
          events = count;
          return metered.run(calls);
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
    // The side that goes first turns every round: a side can pay for the garbage the one before
    // it left, and a fixed order made one side pay for the same other side every time.
    for (let offset = 0; offset < all.length; offset += 1) {
      const index = (round + offset) % all.length;
      const side = all[index]!;
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

/** One run of (e): CPU time, stream events sent and snapshots exported. */
interface LiveRun {
  ns: number;
  events: number;
  snapshots: number;
}

/**
 * (e): `LIVE_CALLS` open calls fed a partial each every `LIVE_EVERY_MS` for `LIVE_SECONDS`, then
 * ended; `live` is the `liveUpdates` option, `undefined` for the bus without tracing.
 */
async function liveRun(live: boolean | undefined): Promise<LiveRun> {
  // Unlike the short runs above, a run here lasts seconds: garbage the previous run left would
  // be collected on this one's time, so start each from a collected heap.
  collectGarbage();
  const provider = new BasicTracerProvider({
    spanProcessors: [
      new BatchSpanProcessor(new SerializingExporter(), {
        maxQueueSize: 1_000_000,
        maxExportBatchSize: 512,
        scheduledDelayMillis: 200,
      }),
    ],
  });
  const bus = new EventBus({ ringSize: 0 });
  bus.setDefaultCausation({ sessionId: 'bench-session', agentId: 'bench-agent' });
  const tracing =
    live === undefined
      ? undefined
      : traceToolCalls(bus, { tracerProvider: provider, liveUpdates: live });
  const start = process.cpuUsage();
  const invokes = Array.from({ length: LIVE_CALLS }, (_, index) =>
    bus.emit<ToolCall>(TOOL_INVOKE, { id: `tc_${index}`, name: 'bench', arguments: {} }),
  );
  let sequence = 0;
  let events = 0;
  await new Promise<void>((resolve) => {
    const deadline = Date.now() + LIVE_SECONDS * 1_000;
    const timer = setInterval(() => {
      sequence += 1;
      for (const [index, invoke] of invokes.entries()) {
        bus.emit(
          TOOL_STREAM_PARTIAL,
          { tool_name: 'bench', tool_id: `tc_${index}`, turn_id: '', sequence, payload: 'token ' },
          { causation: { parentId: invoke.id } },
        );
        events += 1;
      }
      if (Date.now() >= deadline) {
        clearInterval(timer);
        resolve();
      }
    }, LIVE_EVERY_MS);
  });
  for (const [index, invoke] of invokes.entries()) {
    bus.emit(
      TOOL_RESULT,
      { id: `tc_${index}`, name: 'bench', output: 'done' },
      { causation: { parentId: invoke.id } },
    );
  }
  await tracing?.shutdown();
  await provider.forceFlush();
  const used = process.cpuUsage(start);
  const snapshots = tracing?.stats().inflightUpdates ?? 0;
  await provider.shutdown();
  return { ns: (used.user + used.system) * 1_000, events, snapshots };
}

/** (e), interleaved rounds: the least CPU time of each side. */
async function liveCosts(): Promise<{ bus: LiveRun; off: LiveRun; on: LiveRun }> {
  const runs: Record<'bus' | 'off' | 'on', LiveRun[]> = { bus: [], off: [], on: [] };
  const sides = [
    { name: 'bus', live: undefined },
    { name: 'off', live: false },
    { name: 'on', live: true },
  ] as const;
  for (let round = 0; round < LIVE_ROUNDS; round += 1) {
    // Each side goes first, second and last in turn: garbage a run leaves weighs on the next.
    for (let turn = 0; turn < sides.length; turn += 1) {
      const side = sides[(round + turn) % sides.length]!;
      runs[side.name].push(await liveRun(side.live));
    }
  }
  if (process.env.BENCH_DEBUG) {
    for (const [name, list] of Object.entries(runs)) {
      console.log(
        `(e) ${name} ns per event, by round:`,
        list.map((run) => Math.round(run.ns / run.events)),
      );
    }
  }
  const leastRun = (list: LiveRun[]): LiveRun =>
    list.reduce((best, run) => (run.ns / run.events < best.ns / best.events ? run : best));
  return { bus: leastRun(runs.bus), off: leastRun(runs.off), on: leastRun(runs.on) };
}

function printLive(live: { bus: LiveRun; off: LiveRun; on: LiveRun }): void {
  const perEvent = (run: LiveRun): number => run.ns / run.events;
  const ns = (value: number): string => `${value.toFixed(0).padStart(7)} ns`;
  const eventsPerSecond = 1_000 / LIVE_EVERY_MS;
  console.log(
    `\n(e) live updates: ${LIVE_CALLS} calls open ${LIVE_SECONDS} s, a partial each every ` +
      `${LIVE_EVERY_MS} ms (${eventsPerSecond}/s per call), spans serialized to OTLP protobuf, ` +
      `least CPU time of ${LIVE_ROUNDS} interleaved rounds, per stream event:`,
  );
  console.log(`  bus alone                          ${ns(perEvent(live.bus))}`);
  console.log(`  traceToolCalls, liveUpdates: false ${ns(perEvent(live.off))}`);
  console.log(
    `  traceToolCalls, liveUpdates: true  ${ns(perEvent(live.on))}  (${live.on.snapshots} snapshots, ` +
      `${(live.on.snapshots / LIVE_CALLS).toFixed(1)} per call)`,
  );
  const ratio = perEvent(live.on) / perEvent(live.off);
  const tracingRatio =
    (perEvent(live.on) - perEvent(live.bus)) / (perEvent(live.off) - perEvent(live.bus));
  console.log(
    `ratio on / off per stream event: ${ratio.toFixed(3)} (bar <= 1.25); ` +
      `tracing's own share, (on − bus) / (off − bus): ${tracingRatio.toFixed(3)}`,
  );
  const perSnapshot =
    live.on.snapshots === 0
      ? 0
      : (live.on.ns - perEvent(live.off) * live.on.events) / live.on.snapshots;
  // At the default 1 s interval a call that keeps streaming is snapshotted once a second.
  console.log(
    `one snapshot costs about ${(perSnapshot / 1_000).toFixed(1)} µs (${((perSnapshot * 1_000 * 100) / 1e9).toFixed(1)}% ` +
      `of a core per 1,000 calls streaming at once); per stream event that is ` +
      [1, 10, 100]
        .map((rate) => `${ns(perSnapshot / rate).trim()} at ${rate}/s per call`)
        .join(', '),
  );
}

/** A copy of `text` that is a string of its own, as each journal line's decoded ids are. */
function copyOf(text: string): string {
  return Buffer.from(text, 'latin1').toString('latin1');
}

/** (g): `calls` calls as a sidecar decodes them, 12 lines each. */
function replayJournal(calls: number): EventInit[] {
  const lines: EventInit[] = [];
  let time = 1_777_636_800_000_000_000n;
  let sequence = 0;
  const line = (type: string, parentId: string, payload: unknown): void => {
    time += 1_000_001n;
    sequence += 1;
    const causation: Partial<Causation> = {
      parentId: copyOf(parentId),
      parentSeq: 0,
      sessionId: copyOf('s1'),
      agentId: copyOf('a1'),
      depth: 0,
      sequence,
    };
    const id = newEventId();
    lines.push({
      type: copyOf(type),
      id,
      timeUnixNano: time,
      source: 'search',
      causation,
      payload,
    });
  };
  for (let index = 0; index < calls; index += 1) {
    const callId = `tc_${index}`;
    line(TOOL_INVOKE, '', { id: callId, name: 'search', arguments: { query: `thing ${index}` } });
    const invokeId = lines[lines.length - 1]!.id!;
    for (let step = 1; step <= 10; step += 1) {
      const stream = { tool_name: 'search', tool_id: callId, turn_id: '', sequence: step };
      if (step % 2 === 0) {
        line(TOOL_STREAM_PARTIAL, invokeId, { ...stream, payload: `chunk ${step} of ${index}` });
      } else {
        line(TOOL_STREAM_PROGRESS, invokeId, { ...stream, progress: step / 10, payload: 'step' });
      }
    }
    line(TOOL_RESULT, invokeId, { id: callId, name: 'search', output: 'done' });
  }
  return lines;
}

/** A span of (g′) while its call runs: what the straightforward pipeline keeps. */
interface NaiveCall {
  span: Span;
  startUnixNano: bigint;
  partials: number;
  progresses: number;
  partialBytes: number;
  firstPartialMs: number;
  lastProgress: number;
}

function hrTimeOf(unixNano: bigint): [number, number] {
  const seconds = unixNano / 1_000_000_000n;
  return [Number(seconds), Number(unixNano - seconds * 1_000_000_000n)];
}

/** (g′): the spans of (g), made by a subscriber that calls the SDK directly. */
function subscribeNaive(bus: EventBus, tracer: Tracer): void {
  const open = new Map<string, NaiveCall>();
  bus.subscribeAll((event: BusEvent) => {
    const { causation } = event;
    const time = hrTimeOf(event.timeUnixNano);
    if (event.type === TOOL_INVOKE) {
      const payload = event.payload as { id: string; name: string };
      const span = tracer.startSpan(`execute_tool ${payload.name}`, {
        kind: SpanKind.INTERNAL,
        startTime: time,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': payload.name,
          'gen_ai.tool.type': 'function',
          'gen_ai.tool.call.id': payload.id,
          'gen_ai.conversation.id': causation.sessionId,
          'gen_ai.agent.id': causation.agentId,
          'gen_ai.agent.name': causation.agentId,
          'tooltrace.depth': causation.depth,
          'tooltrace.event.id': event.id,
          'tooltrace.event.sequence': causation.sequence,
          'tooltrace.event.source': event.source ?? '',
        },
      });
      open.set(event.id, {
        span,
        startUnixNano: event.timeUnixNano,
        partials: 0,
        progresses: 0,
        partialBytes: 0,
        firstPartialMs: -1,
        lastProgress: -1,
      });
      return;
    }
    const call = open.get(causation.parentId);
    if (call === undefined) return;
    if (event.type === TOOL_RESULT) {
      open.delete(causation.parentId);
      call.span.setAttributes({
        'tooltrace.stream.partial.count': call.partials,
        'tooltrace.stream.progress.count': call.progresses,
        'tooltrace.stream.partial.bytes': call.partialBytes,
        'tooltrace.stream.time_to_first_partial_ms': call.firstPartialMs,
        'tooltrace.stream.last_progress': call.lastProgress,
        'tooltrace.stream.events.recorded': call.partials + call.progresses,
        'tooltrace.stream.events.coalesced': 0,
        'tooltrace.end_reason': 'result',
        'tooltrace.result.event.id': event.id,
      });
      call.span.setStatus({ code: SpanStatusCode.OK });
      call.span.end(time);
      return;
    }
    const payload = event.payload as { sequence: number; progress?: number; payload: string };
    if (event.type === TOOL_STREAM_PROGRESS) {
      call.progresses += 1;
      call.lastProgress = payload.progress ?? -1;
      call.span.addEvent(
        event.type,
        {
          'tooltrace.stream.sequence': payload.sequence,
          'tooltrace.stream.progress': call.lastProgress,
        },
        time,
      );
    } else {
      const bytes = Buffer.byteLength(payload.payload);
      call.partials += 1;
      call.partialBytes += bytes;
      if (call.firstPartialMs < 0) {
        call.firstPartialMs = Number(event.timeUnixNano - call.startUnixNano) / 1e6;
      }
      call.span.addEvent(
        event.type,
        { 'tooltrace.stream.sequence': payload.sequence, 'tooltrace.stream.payload.bytes': bytes },
        time,
      );
    }
  });
}

/**
 * (g) and (g′): the least CPU time per journal line of interleaved rounds, each on a fresh bus
 * and provider with a journal of its own (ids the tracer has not seen).
 */
async function replayCosts(): Promise<{ traced: number; naive: number }> {
  const sides = {
    traced: (bus: EventBus): (() => Promise<void>) => {
      const idGenerator = new DerivedIdGenerator();
      const provider = newProvider(idGenerator);
      const tracing = traceReplay(bus, { tracerProvider: provider, idGenerator });
      return () => tracing.shutdown();
    },
    naive: (bus: EventBus): (() => Promise<void>) => {
      subscribeNaive(bus, newProvider().getTracer('bench'));
      return () => Promise.resolve();
    },
  };
  const times: Record<keyof typeof sides, number[]> = { traced: [], naive: [] };
  for (let round = 0; round < ROUNDS + 2; round += 1) {
    for (const name of ['traced', 'naive'] as const) {
      const journal = replayJournal(REPLAY_CALLS);
      const bus = new EventBus({ ringSize: 0, dispatchFrames: false });
      const done = sides[name](bus);
      const ns = await timed(() => {
        for (const line of journal) bus.emitEvent(line);
      });
      await done();
      // The first two rounds warm up.
      if (round >= 2) times[name].push(ns / journal.length);
    }
  }
  return { traced: least(times.traced), naive: least(times.naive) };
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
  const [a, b, c, naive, metered] = [0, 1, 2, 3, 4];
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
  const meteredPerEvent = short.perEvent[metered]! - short.perEvent[a]!;
  const meteredPerCall = short.perCall[metered]! - short.perCall[a]!;
  console.log(
    `(f) metrics: ((f) − (a)) / ((b) − (a)) per event ${(meteredPerEvent / addedPerEvent).toFixed(2)} (bar <= 1.15), ` +
      `per call ${(meteredPerCall / addedPerCall).toFixed(2)}`,
  );
  console.log(
    `(d) heap per open call (10 stream events): traced ${memory.traced.toFixed(0)} B, ` +
      `bare SDK span ${memory.bare.toFixed(0)} B, ratio ${(memory.traced / memory.bare).toFixed(2)} (bar <= 1.50)`,
  );
  const replay = await replayCosts();
  console.log(
    `\n(g) the sidecar's path, ${REPLAY_CALLS} calls of 12 decoded lines emitted on a bus ` +
      `without dispatch frames, least CPU time of ${ROUNDS} interleaved rounds, per line:`,
  );
  console.log(`  (g)  traceToolCalls, derived ids         ${ns(replay.traced)}`);
  console.log(`  (g′) naive SDK subscriber, same spans     ${ns(replay.naive)}`);
  console.log(`ratio (g) / (g′): ${(replay.traced / replay.naive).toFixed(2)}`);
  printLive(await liveCosts());
}

await main();
