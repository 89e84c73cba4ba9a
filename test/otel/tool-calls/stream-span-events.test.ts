import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanLimits,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/bus/index.js';
import { traceToolCalls, type TraceToolCallsOptions } from '../../../src/otel/index.js';

const START = 1_780_000_000_123_456_789n;

/** One call of `partials` partials and a progress note, each at a time of its own; its span. */
async function tracedCall(
  spanLimits: SpanLimits | undefined,
  partials: number,
  options: Omit<TraceToolCallsOptions, 'tracerProvider'> = {},
): Promise<ReadableSpan> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(spanLimits === undefined ? {} : { spanLimits }),
  });
  providers.push(provider);
  const bus = new EventBus();
  const tracing = traceToolCalls(bus, { tracerProvider: provider, ...options });
  const invoke = bus.emit(
    'tool.invoke',
    { id: 'tc_1', name: 'search', arguments: {} },
    { timeUnixNano: START },
  );
  const causation = { parentId: invoke.id };
  for (let sequence = 1; sequence <= partials; sequence += 1) {
    bus.emit(
      'tool.stream.partial',
      {
        tool_name: 'search',
        tool_id: 'tc_1',
        turn_id: '',
        sequence,
        payload: 'x'.repeat(sequence),
      },
      { causation, timeUnixNano: START + BigInt(sequence) * 1_000_001n },
    );
  }
  bus.emit(
    'tool.stream.progress',
    { tool_name: 'search', tool_id: 'tc_1', turn_id: '', sequence: partials + 1, progress: 0.5 },
    { causation, timeUnixNano: START + BigInt(partials + 1) * 1_000_001n },
  );
  bus.emit(
    'tool.result',
    { id: 'tc_1', name: 'search', output: 'done' },
    { causation, timeUnixNano: START + 999_000_000n },
  );
  await tracing.forceFlush();
  const [span] = exporter.getFinishedSpans();
  return span!;
}

/** The time of `offset` ns after START as the SDK keeps it. */
function hrTimeAfter(offset: bigint): [number, number] {
  const time = START + offset;
  return [Number(time / 1_000_000_000n), Number(time % 1_000_000_000n)];
}

const providers: BasicTracerProvider[] = [];

afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.shutdown()));
});

describe("a call's stream events on the SDK span", () => {
  it('are each event at its own time, with its sequence and size or progress, in order', async () => {
    const span = await tracedCall(undefined, 3);
    expect(span.events).toEqual([
      ...[1, 2, 3].map((sequence) => ({
        name: 'tool.stream.partial',
        attributes: {
          'tooltrace.stream.sequence': sequence,
          'tooltrace.stream.payload.bytes': sequence,
        },
        time: hrTimeAfter(BigInt(sequence) * 1_000_001n),
        droppedAttributesCount: 0,
      })),
      {
        name: 'tool.stream.progress',
        attributes: { 'tooltrace.stream.sequence': 4, 'tooltrace.stream.progress': 0.5 },
        time: hrTimeAfter(4n * 1_000_001n),
        droppedAttributesCount: 0,
      },
    ]);
    expect(span.droppedEventsCount).toBe(0);
    expect(span.attributes['tooltrace.stream.events.recorded']).toBe(4);
  });

  it('are the same events with content capture on, the payload beside them', async () => {
    const plain = await tracedCall(undefined, 20);
    const captured = await tracedCall(undefined, 20, { captureContent: true });
    expect(
      captured.events.map(({ attributes }) => attributes?.['tooltrace.stream.payload']),
    ).toEqual([...Array.from({ length: 20 }, (_, index) => 'x'.repeat(index + 1)), undefined]);
    const withoutPayload = captured.events.map(({ attributes, ...event }) => {
      const { 'tooltrace.stream.payload': _payload, ...rest } = attributes ?? {};
      return { ...event, attributes: rest };
    });
    expect(withoutPayload).toEqual(plain.events);
  });

  it("keep the SDK's event count limit: the latest events stay, the others are counted dropped", async () => {
    const span = await tracedCall({ eventCountLimit: 5 }, 20);
    expect(span.events.map(({ attributes }) => attributes?.['tooltrace.stream.sequence'])).toEqual([
      17, 18, 19, 20, 21,
    ]);
    expect(span.droppedEventsCount).toBe(16);
  });

  it("keep the SDK's attribute limit per event, counting what it drops", async () => {
    const span = await tracedCall({ attributePerEventCountLimit: 1 }, 2);
    expect(
      span.events.map(({ attributes, droppedAttributesCount }) => [
        attributes,
        droppedAttributesCount,
      ]),
    ).toEqual([
      [{ 'tooltrace.stream.sequence': 1 }, 1],
      [{ 'tooltrace.stream.sequence': 2 }, 1],
      [{ 'tooltrace.stream.sequence': 3 }, 1],
    ]);
  });
});
