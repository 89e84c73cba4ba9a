import { context, propagation, trace, type Attributes } from '@opentelemetry/api';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import {
  DataPointType,
  MeterProvider,
  type HistogramMetricData,
  type MetricData,
  type SumMetricData,
} from '@opentelemetry/sdk-metrics';
import { CollectedMetricReader } from '../../src/demo/collected-metric-reader.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BusEvent, EventBus } from '../../src/bus/index.js';
import { at, spanOfCall, startTracingHarness, type TracingHarness } from './tracing-harness.js';

/** A real SDK reader that hands over what the instruments hold when asked. */
class PullReader extends CollectedMetricReader {
  async metric(name: string): Promise<MetricData | undefined> {
    const { resourceMetrics } = await this.collect();
    for (const scope of resourceMetrics.scopeMetrics) {
      const found = scope.metrics.find((metric) => metric.descriptor.name === name);
      if (found !== undefined) return found;
    }
    return undefined;
  }
}

let harness: TracingHarness | undefined;
let meterProvider: MeterProvider | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await harness?.close();
  await meterProvider?.shutdown();
  harness = undefined;
  meterProvider = undefined;
  trace.disable();
  context.disable();
  propagation.disable();
});

async function start(tracing: Parameters<typeof startTracingHarness>[0] = {}): Promise<{
  bus: EventBus;
  reader: PullReader;
}> {
  const reader = new PullReader();
  meterProvider = new MeterProvider({ readers: [reader] });
  harness = await startTracingHarness({
    ...tracing,
    tracing: { meterProvider, liveUpdates: false, ...tracing.tracing },
  });
  return { bus: harness.bus, reader };
}

function call(
  bus: EventBus,
  id: string,
  name: string,
  outcome: { error?: string; errorType?: string; cancelled?: boolean },
  startMs: number,
  endMs: number,
  partials = 0,
): BusEvent {
  const invoke = bus.emit(
    'tool.invoke',
    { id, name, arguments: {} },
    { timeUnixNano: at(startMs), causation: { agentId: 'planner' } },
  );
  for (let index = 1; index <= partials; index += 1) {
    bus.emit(
      'tool.stream.partial',
      { tool_name: name, tool_id: id, turn_id: '', sequence: index, payload: 'chunk' },
      { timeUnixNano: at(startMs + 10 * index), causation: { parentId: invoke.id } },
    );
  }
  return bus.emit(
    'tool.result',
    { id, name, output: 'out', ...outcome },
    { timeUnixNano: at(endMs), causation: { parentId: invoke.id } },
  );
}

function histogramPoints(
  metric: MetricData | undefined,
): { attributes: Attributes; count: number; sum: number }[] {
  expect(metric?.dataPointType).toBe(DataPointType.HISTOGRAM);
  return (metric as HistogramMetricData).dataPoints.map((point) => ({
    attributes: point.attributes,
    count: point.value.count,
    sum: point.value.sum ?? 0,
  }));
}

describe('traceToolCalls() metrics', () => {
  it('records gen_ai.execute_tool.duration once per call, per tool, with error.type on failures', async () => {
    const { bus, reader } = await start();
    call(bus, 'tc_1', 'search', {}, 0, 500);
    call(bus, 'tc_2', 'search', {}, 0, 1500);
    const repeated = call(bus, 'tc_3', 'search', {}, 0, 250);
    call(bus, 'tc_4', 'search', { error: 'timed out', errorType: 'timeout' }, 0, 100);
    call(bus, 'tc_5', 'search', { error: 'boom' }, 0, 100);
    call(bus, 'tc_6', 'fetch', { error: 'aborted', cancelled: true }, 0, 300);
    call(bus, 'tc_7', 'fetch', {}, 0, 700, 3);
    // A duplicate result (the same event again) ends nothing and counts nothing.
    bus.emitEvent({ ...repeated, timeUnixNano: repeated.timeUnixNano });

    const duration = await reader.metric('gen_ai.execute_tool.duration');
    expect(duration?.descriptor.unit).toBe('s');
    const points = histogramPoints(duration);
    expect(points.reduce((total, point) => total + point.count, 0)).toBe(7);
    const count = (match: Attributes): number =>
      points
        .filter((point) =>
          Object.entries(match).every(([key, value]) => point.attributes[key] === value),
        )
        .reduce((total, point) => total + point.count, 0);
    expect(count({ 'gen_ai.tool.name': 'search', 'error.type': undefined })).toBe(3);
    expect(count({ 'error.type': 'timeout' })).toBe(1);
    expect(count({ 'error.type': '_OTHER' })).toBe(1);
    expect(count({ 'error.type': 'cancelled', 'gen_ai.tool.name': 'fetch' })).toBe(1);
    const ok = points.find(
      (point) =>
        point.attributes['gen_ai.tool.name'] === 'search' &&
        point.attributes['error.type'] === undefined,
    );
    expect(ok?.sum).toBeCloseTo(2.25, 6);
    expect(ok?.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'search',
      'gen_ai.tool.type': 'function',
      'gen_ai.agent.name': 'planner',
    });

    const firstPartial = histogramPoints(
      await reader.metric('tooltrace.tool.time_to_first_partial'),
    );
    expect(firstPartial).toEqual([
      {
        attributes: { 'gen_ai.tool.name': 'fetch' },
        count: 1,
        sum: expect.closeTo(0.01, 9) as number,
      },
    ]);
    const streamEvents = histogramPoints(await reader.metric('tooltrace.tool.stream.events'));
    expect(streamEvents.reduce((total, point) => total + point.count, 0)).toBe(7);
    expect(streamEvents.reduce((total, point) => total + point.sum, 0)).toBe(3);
  });

  it('counts calls in flight up while they run and back down when they end, abandoned ones included', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const { bus, reader } = await start({ tracing: { idleTimeoutMs: 1000 } });
    const inFlight = async (): Promise<number> => {
      const metric = (await reader.metric('tooltrace.tool.calls.in_flight')) as
        SumMetricData | undefined;
      return (metric?.dataPoints ?? []).reduce((total, point) => total + point.value, 0);
    };
    const first = bus.emit('tool.invoke', { id: 'tc_1', name: 'slow', arguments: {} });
    bus.emit('tool.invoke', { id: 'tc_2', name: 'slow', arguments: {} });
    expect(await inFlight()).toBe(2);
    bus.emit(
      'tool.result',
      { id: 'tc_1', name: 'slow', output: '' },
      { causation: { parentId: first.id } },
    );
    expect(await inFlight()).toBe(1);
    vi.advanceTimersByTime(2000);
    expect(await inFlight()).toBe(0);
    const points = histogramPoints(await reader.metric('gen_ai.execute_tool.duration'));
    expect(points.map((point) => [point.attributes['error.type'], point.count])).toEqual(
      expect.arrayContaining([
        [undefined, 1],
        ['abandoned', 1],
      ]),
    );
  });

  it('does not count a call cut short by shutdown, whose result may still come in a later run', async () => {
    const { bus, reader } = await start();
    bus.emit('tool.invoke', { id: 'tc_open', name: 'slow', arguments: {} });
    await harness!.tracing.shutdown();
    expect(await reader.metric('gen_ai.execute_tool.duration')).toBeUndefined();
  });

  it('records turn and model-call durations and token usage by gen_ai.token.type', async () => {
    const { bus, reader } = await start();
    const turn = bus.emit(
      'agent.turn.start',
      {},
      { timeUnixNano: at(0), causation: { agentId: 'planner' } },
    );
    const request = bus.emit(
      'llm.request',
      { requestId: 'r1', model: 'm1' },
      { timeUnixNano: at(10), causation: { parentId: turn.id, agentId: 'planner' } },
    );
    bus.emit(
      'llm.response',
      { requestId: 'r1', model: 'm1-v2', usage: { inputTokens: 100, outputTokens: 20 } },
      { timeUnixNano: at(410), causation: { parentId: request.id, agentId: 'planner' } },
    );
    bus.emit('agent.turn.end', {}, { timeUnixNano: at(1000), causation: { parentId: turn.id } });

    const agent = histogramPoints(await reader.metric('gen_ai.invoke_agent.duration'));
    expect(agent).toEqual([
      {
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
        count: 1,
        sum: expect.closeTo(1, 9) as number,
      },
    ]);
    const client = histogramPoints(await reader.metric('gen_ai.client.operation.duration'));
    expect(client).toEqual([
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'm1',
          'gen_ai.response.model': 'm1-v2',
          'gen_ai.agent.name': 'planner',
        },
        count: 1,
        sum: expect.closeTo(0.4, 9) as number,
      },
    ]);
    const tokens = histogramPoints(await reader.metric('gen_ai.client.token.usage'));
    expect(tokens.map((point) => [point.attributes['gen_ai.token.type'], point.sum])).toEqual(
      expect.arrayContaining([
        ['input', 100],
        ['output', 20],
      ]),
    );
  });
});

describe('traceToolCalls() stream events as log records', () => {
  async function withLogs(streamEvents: 'log-records' | 'both'): Promise<{
    bus: EventBus;
    records: InMemoryLogRecordExporter;
  }> {
    const records = new InMemoryLogRecordExporter();
    const loggerProvider = new LoggerProvider({
      processors: [new SimpleLogRecordProcessor({ exporter: records })],
    });
    harness = await startTracingHarness({
      tracing: { streamEvents, loggerProvider, liveUpdates: false },
    });
    return { bus: harness.bus, records };
  }

  it("emits one log record per stream event in the tool span's context, and no stream span events", async () => {
    const { bus, records } = await withLogs('log-records');
    call(bus, 'tc_1', 'writer', {}, 0, 100, 4);
    const [span] = await harness!.spans(1);
    const logs = records.getFinishedLogRecords();
    expect(logs).toHaveLength(4);
    for (const [index, log] of logs.entries()) {
      expect(log.eventName).toBe('tool.stream.partial');
      expect(log.spanContext?.traceId).toBe(span!.traceId);
      expect(log.spanContext?.spanId).toBe(span!.spanId);
      expect(log.attributes).toEqual({
        'tooltrace.stream.sequence': index + 1,
        'tooltrace.stream.payload.bytes': 5,
        'gen_ai.tool.name': 'writer',
        'gen_ai.tool.call.id': 'tc_1',
      });
      expect(log.hrTime).toEqual([
        Number(at(10 * (index + 1)) / 1_000_000_000n),
        Number(at(10 * (index + 1)) % 1_000_000_000n),
      ]);
    }
    expect(span!.events).toEqual([]);
    expect(span!.attributes['tooltrace.stream.partial.count']).toBe(4);
  });

  it("keeps the span events too with 'both'", async () => {
    const { bus, records } = await withLogs('both');
    call(bus, 'tc_1', 'writer', {}, 0, 100, 2);
    const span = spanOfCall(await harness!.spans(1), 'tc_1');
    expect(records.getFinishedLogRecords()).toHaveLength(2);
    expect(span.events.map((event) => event.name)).toEqual([
      'tool.stream.partial',
      'tool.stream.partial',
    ]);
  });
});
