import type { Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BusEvent, EventBus } from '../../src/bus/index.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../src/testing/index.js';
import { T0, at, startTracingHarness, type TracingHarness } from './tracing-harness.js';

/*
 * How time is faked here. The subscriber's clock (`Date`) and its timers (`setInterval`) are
 * fake, so ten minutes of a call pass in a moment and every snapshot lands on a known tick. The
 * exporter talks HTTP to the real receiver, which needs real I/O: a test advances the fake clock
 * synchronously, then flushes the provider and waits for the receiver in real time. The test
 * about the processor's own delay fakes `setTimeout` too, so that the BatchSpanProcessor's 500 ms
 * timer runs on the fake clock: advancing past it starts the export, and the test then returns
 * to real timers to let the HTTP request finish (the SDK's export timeout, a fake `setTimeout`
 * by then, is simply never advanced to).
 */

/** Fakes the subscriber's clock and timers only; the SDK's `setTimeout`s stay real. */
function fakeSubscriberClock(): void {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
}

/** Fakes the span processor's timer as well. */
function fakeEveryClock(): void {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  });
}

let harness: TracingHarness | undefined;
const receivers: OtlpReceiver[] = [];
const providers: NodeTracerProvider[] = [];

afterEach(async () => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
  await harness?.close();
  harness = undefined;
  await Promise.all(providers.splice(0).map((provider) => provider.shutdown()));
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

function invoke(bus: EventBus, id: string, time: bigint): BusEvent {
  return bus.emit(
    'tool.invoke',
    { id, name: 'slow', arguments: { q: 'x' } },
    { timeUnixNano: time },
  );
}

function progress(
  bus: EventBus,
  call: BusEvent,
  sequence: number,
  value: number,
  time: bigint,
): void {
  const id = (call.payload as { id: string }).id;
  bus.emit(
    'tool.stream.progress',
    { tool_name: 'slow', tool_id: id, turn_id: '', sequence, progress: value },
    { causation: { parentId: call.id }, timeUnixNano: time },
  );
}

function partial(
  bus: EventBus,
  call: BusEvent,
  sequence: number,
  payload: string,
  time: bigint,
): void {
  const id = (call.payload as { id: string }).id;
  bus.emit(
    'tool.stream.partial',
    { tool_name: 'slow', tool_id: id, turn_id: '', sequence, payload },
    { causation: { parentId: call.id }, timeUnixNano: time },
  );
}

function result(bus: EventBus, call: BusEvent, time: bigint): void {
  const id = (call.payload as { id: string }).id;
  bus.emit(
    'tool.result',
    { id, name: 'slow', output: 'done' },
    { causation: { parentId: call.id }, timeUnixNano: time },
  );
}

const isSnapshot = (span: ReceivedSpan): boolean => span.attributes['tooltrace.inflight'] === true;

function finalSpan(spans: readonly ReceivedSpan[]): ReceivedSpan {
  const finals = spans.filter((span) => !isSnapshot(span));
  expect(finals).toHaveLength(1);
  return finals[0]!;
}

/** Milliseconds from T0 (the call's start) to `time`. */
function sinceStart(time: bigint): number {
  return Number(time - T0) / 1e6;
}

describe('traceToolCalls()', () => {
  describe('live updates', () => {
    it('exports a snapshot within 2 s of the invoke through a BatchSpanProcessor with a 500 ms delay', async () => {
      fakeEveryClock();
      harness = await startTracingHarness({ scheduledDelayMillis: 500 });
      const { bus, receiver, tracing } = harness;
      bus.setDefaultCausation({ sessionId: 's1', agentId: 'planner' });
      const call = invoke(bus, 'tc_1', at(0));
      progress(bus, call, 1, 0.1, at(300));
      vi.advanceTimersByTime(999);
      expect(tracing.stats().inflightUpdates).toBe(0);
      vi.advanceTimersByTime(1);
      expect(tracing.stats().inflightUpdates).toBe(1);
      // The processor's timer, started when the snapshot ended at 1 s, fires at 1.5 s.
      vi.advanceTimersByTime(500);
      vi.useRealTimers();
      const [snapshot] = await receiver.waitForSpans(1, 5_000);

      expect(snapshot!.name).toBe('execute_tool slow (in flight)');
      expect(snapshot!.kind).toBe(1); // INTERNAL
      expect(snapshot!.status.code).toBe(0); // UNSET
      expect(snapshot!.startTimeUnixNano).toBe(at(0));
      expect(snapshot!.endTimeUnixNano).toBe(at(1_000));
      // No gen_ai.operation.name: span metrics count each call once, by its final span.
      expect(snapshot!.attributes).toEqual({
        'gen_ai.tool.name': 'slow',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': 'tc_1',
        'gen_ai.conversation.id': 's1',
        'gen_ai.agent.id': 'planner',
        'gen_ai.agent.name': 'planner',
        'tooltrace.event.id': call.id,
        'tooltrace.inflight': true,
        'tooltrace.inflight.update': 1,
        'tooltrace.stream.partial.count': 0,
        'tooltrace.stream.progress.count': 1,
        'tooltrace.stream.partial.bytes': 0,
        'tooltrace.stream.last_progress': 0.1,
      });

      result(bus, call, at(2_000));
      const final = finalSpan(await harness.spans(2));
      expect(snapshot!.traceId).toBe(final.traceId);
      expect(snapshot!.parentSpanId).toBe(final.spanId);
      expect(final.name).toBe('execute_tool slow');
      expect(final.attributes['tooltrace.inflight.updates']).toBe(1);
      expect(final.attributes).not.toHaveProperty('tooltrace.inflight');
    });

    it.each([
      { intervalMs: 1_000, expected: 540 },
      { intervalMs: 5_000, expected: 108 },
    ])(
      'snapshots a call streaming for 10 simulated minutes once per $intervalMs ms, none while it is quiet',
      async ({ intervalMs, expected }) => {
        fakeSubscriberClock();
        harness = await startTracingHarness({ tracing: { liveUpdates: { intervalMs } } });
        const { bus } = harness;
        const call = invoke(bus, 'tc_1', at(0));
        // A progress event every second, except for a quiet minute from 300 s to 360 s.
        const sent: number[] = [];
        for (let second = 1; second <= 600; second += 1) {
          vi.advanceTimersByTime(1_000);
          if (second >= 300 && second < 360) continue;
          sent.push(second * 1_000);
          progress(bus, call, sent.length, second / 600, at(second * 1_000));
        }
        result(bus, call, at(600_000));
        expect(harness.tracing.stats().inflightUpdates).toBe(expected);

        const spans = await harness.spans(expected + 1);
        const final = finalSpan(spans);
        const snapshots = spans
          .filter(isSnapshot)
          .sort((left, right) => Number(left.endTimeUnixNano - right.endTimeUnixNano));
        expect(snapshots).toHaveLength(expected);
        expect(final.attributes['tooltrace.inflight.updates']).toBe(expected);
        // The first one is due once the call has been open an interval: well within 2 s at 1 s.
        expect(sinceStart(snapshots[0]!.endTimeUnixNano)).toBe(intervalMs);
        const gaps = snapshots
          .slice(1)
          .map((snapshot, index) =>
            sinceStart(snapshot.endTimeUnixNano - snapshots[index]!.endTimeUnixNano + T0),
          );
        // One per interval while events come; the quiet minute is one long gap.
        expect(gaps.filter((gap) => gap === intervalMs)).toHaveLength(expected - 2);
        expect(gaps.filter((gap) => gap > 60_000)).toHaveLength(1);
        for (const [index, snapshot] of snapshots.entries()) {
          expect(snapshot.traceId).toBe(final.traceId);
          expect(snapshot.parentSpanId).toBe(final.spanId);
          expect(snapshot.startTimeUnixNano).toBe(final.startTimeUnixNano);
          expect(snapshot.attributes['tooltrace.inflight.update']).toBe(index + 1);
          // Its state is the call's at its end: every event before it, the latest progress.
          const end = sinceStart(snapshot.endTimeUnixNano);
          const before = sent.filter((time) => time < end);
          expect(snapshot.attributes['tooltrace.stream.progress.count']).toBe(before.length);
          if (before.length > 0) {
            expect(snapshot.attributes['tooltrace.stream.last_progress']).toBe(
              before.at(-1)! / 600_000,
            );
          }
        }
      },
    );

    it('snapshots a call that never streams once, then waits for a change', async () => {
      fakeSubscriberClock();
      harness = await startTracingHarness();
      const call = invoke(harness.bus, 'tc_1', at(0));
      vi.advanceTimersByTime(30_000);
      expect(harness.tracing.stats().inflightUpdates).toBe(1);
      partial(harness.bus, call, 1, 'chunk', at(30_000));
      vi.advanceTimersByTime(250);
      expect(harness.tracing.stats().inflightUpdates).toBe(2);
      vi.advanceTimersByTime(30_000);
      expect(harness.tracing.stats().inflightUpdates).toBe(2);
    });

    it('leaves calls that end within the interval alone', async () => {
      fakeSubscriberClock();
      harness = await startTracingHarness();
      const { bus, tracing } = harness;
      const call = invoke(bus, 'tc_1', at(0));
      vi.advanceTimersByTime(400);
      partial(bus, call, 1, 'chunk', at(400));
      vi.advanceTimersByTime(500);
      result(bus, call, at(900));
      vi.advanceTimersByTime(5_000);
      expect(tracing.stats().inflightUpdates).toBe(0);
      const spans = await harness.spans(1);
      expect(spans).toHaveLength(1);
      expect(spans[0]!.attributes).not.toHaveProperty('tooltrace.inflight.updates');
    });

    it('exports no snapshot and starts no timer with liveUpdates: false', async () => {
      fakeSubscriberClock();
      harness = await startTracingHarness({ tracing: { liveUpdates: false } });
      const call = invoke(harness.bus, 'tc_1', at(0));
      expect(vi.getTimerCount()).toBe(1); // the idle sweep, nothing else
      for (let second = 1; second <= 60; second += 1) {
        vi.advanceTimersByTime(1_000);
        progress(harness.bus, call, second, second / 60, at(second * 1_000));
      }
      result(harness.bus, call, at(60_000));
      expect(harness.tracing.stats().inflightUpdates).toBe(0);
      await harness.spans(1);
      expect(harness.receiver.spans.filter(isSnapshot)).toEqual([]);
    });

    it('takes TOOLTRACE_LIVE_UPDATES=false as off, unless the option says otherwise', async () => {
      vi.stubEnv('TOOLTRACE_LIVE_UPDATES', 'false');
      fakeSubscriberClock();
      harness = await startTracingHarness();
      invoke(harness.bus, 'tc_1', at(0));
      vi.advanceTimersByTime(5_000);
      expect(harness.tracing.stats().inflightUpdates).toBe(0);
      await harness.close();

      harness = await startTracingHarness({ tracing: { liveUpdates: true } });
      invoke(harness.bus, 'tc_1', at(0));
      vi.advanceTimersByTime(5_000);
      expect(harness.tracing.stats().inflightUpdates).toBe(1);
    });

    it('puts no content on snapshots without content capture', async () => {
      fakeSubscriberClock();
      harness = await startTracingHarness();
      const call = invoke(harness.bus, 'tc_1', at(0));
      partial(harness.bus, call, 1, 'the secret plan', at(10));
      vi.advanceTimersByTime(1_000);
      const [snapshot] = await harness.spans(1);
      expect(snapshot!.attributes['tooltrace.stream.partial.bytes']).toBe(15);
      expect(snapshot!.attributes).not.toHaveProperty('tooltrace.stream.payload');
      expect(snapshot!.attributes).not.toHaveProperty('gen_ai.tool.call.arguments');
      expect(JSON.stringify(snapshot!.attributes)).not.toContain('secret plan');
    });

    it('carries the latest partial with content capture, cut and redacted like the final span', async () => {
      fakeSubscriberClock();
      harness = await startTracingHarness({
        tracing: { captureContent: true, maxContentBytes: 48 },
      });
      const { bus } = harness;
      const call = invoke(bus, 'tc_1', at(0));
      partial(bus, call, 1, 'first chunk', at(10));
      const latest = `Authorization: Bearer abcdefghijklmnop ${'and more text '.repeat(20)}`;
      partial(bus, call, 2, latest, at(20));
      progress(bus, call, 3, 0.5, at(30));
      vi.advanceTimersByTime(1_000);
      result(bus, call, at(1_500));
      const spans = await harness.spans(2);
      const final = finalSpan(spans);
      const snapshot = spans.find(isSnapshot)!;
      const payload = snapshot.attributes['tooltrace.stream.payload'];
      const lastPartial = final.events
        .filter((event) => event.name === 'tool.stream.partial')
        .at(-1)!;
      expect(payload).toBe(lastPartial.attributes['tooltrace.stream.payload']);
      expect(payload).toMatch(/^Authorization: \[REDACTED\]/);
      expect(payload).not.toContain('abcdefghijklmnop');
      expect(Buffer.byteLength(String(payload))).toBeLessThanOrEqual(48);
      expect(snapshot.attributes).not.toHaveProperty('gen_ai.tool.call.arguments');
    });

    it('gives snapshots ids derived from their call, so a replay re-exports the same ones', async () => {
      const snapshotIds = async (): Promise<string[]> => {
        fakeSubscriberClock();
        harness = await startTracingHarness({ derivedIds: true });
        const call = harness.bus.emitEvent({
          type: 'tool.invoke',
          id: 'a'.repeat(32),
          payload: { id: 'tc_1', name: 'slow', arguments: {} },
          timeUnixNano: at(0),
        });
        for (let second = 1; second <= 3; second += 1) {
          vi.advanceTimersByTime(1_000);
          progress(harness.bus, call, second, second / 3, at(second * 1_000));
        }
        result(harness.bus, call, at(3_000));
        const spans = await harness.spans(4);
        await harness.close();
        harness = undefined;
        vi.useRealTimers();
        finalSpan(spans);
        return spans
          .filter(isSnapshot)
          .sort((left, right) => Number(left.endTimeUnixNano - right.endTimeUnixNano))
          .map((span) => `${span.traceId}/${span.spanId}<-${span.parentSpanId}`);
      };
      const first = await snapshotIds();
      const second = await snapshotIds();
      expect(first).toHaveLength(3);
      expect(new Set(first).size).toBe(3);
      expect(second).toEqual(first);
    });

    it('sends snapshots through liveTracerProvider, so a SimpleSpanProcessor exports them at once', async () => {
      fakeSubscriberClock();
      const liveReceiver = await startOtlpReceiver();
      receivers.push(liveReceiver);
      const liveProvider = new NodeTracerProvider({
        spanProcessors: [
          new SimpleSpanProcessor(new OTLPTraceExporter({ url: liveReceiver.tracesUrl })),
        ],
      });
      providers.push(liveProvider);
      harness = await startTracingHarness({
        tracing: { liveUpdates: { tracerProvider: liveProvider } },
      });
      const call = invoke(harness.bus, 'tc_1', at(0));
      vi.advanceTimersByTime(1_000);
      // No flush: the simple processor started the export when the snapshot ended.
      const [snapshot] = await liveReceiver.waitForSpans(1, 5_000);
      expect(snapshot!.name).toBe('execute_tool slow (in flight)');
      result(harness.bus, call, at(1_500));
      const final = finalSpan(await harness.spans(1));
      expect(harness.receiver.spans.filter(isSnapshot)).toEqual([]);
      expect(snapshot!.parentSpanId).toBe(final.spanId);
      expect(final.attributes['tooltrace.inflight.updates']).toBe(1);
    });

    it('counts a snapshot that fails and still exports the call', async () => {
      fakeSubscriberClock();
      const broken: TracerProvider = {
        getTracer: (): Tracer => ({
          startSpan: (): Span => {
            throw new Error('live tracer exploded');
          },
          startActiveSpan: (): never => {
            throw new Error('live tracer exploded');
          },
        }),
      };
      const coreErrors: unknown[] = [];
      harness = await startTracingHarness({
        tracing: { liveUpdates: { tracerProvider: broken } },
      });
      harness.bus.subscribe('core.error', (event) => {
        coreErrors.push(event.payload);
      });
      const call = invoke(harness.bus, 'tc_1', at(0));
      vi.advanceTimersByTime(5_000);
      result(harness.bus, call, at(5_000));
      expect(coreErrors).toEqual([]);
      expect(harness.tracing.stats()).toMatchObject({ inflightUpdates: 0, errors: { tracer: 1 } });
      const final = finalSpan(await harness.spans(1));
      expect(final.status.code).toBe(1);
    });
  });
});
