import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { EventBus, TOOL_INVOKE, type ToolCall } from '../../src/index.js';
import { DerivedIdGenerator, traceReplay } from '../../src/otel/index.js';

/** A replay whose one call never gets its result, shut down; resolves the spans exported. */
async function shutDownWithAnOpenCall(resumable: boolean | undefined) {
  const exporter = new InMemorySpanExporter();
  const idGenerator = new DerivedIdGenerator();
  const provider = new BasicTracerProvider({
    idGenerator,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const bus = new EventBus();
  const tracing = traceReplay(bus, {
    tracerProvider: provider,
    idGenerator,
    liveUpdates: false,
    ...(resumable === undefined ? {} : { resumable }),
  });
  bus.emit<ToolCall>(TOOL_INVOKE, { id: 'tc_1', name: 'read_file', arguments: {} });
  await tracing.shutdown();
  return exporter.getFinishedSpans();
}

describe('traceReplay', () => {
  describe('shutdown() with a call still open', () => {
    it('ends it, marked shutdown, when nothing resumes the replay (the default), derived ids or not', async () => {
      const spans = await shutDownWithAnOpenCall(undefined);
      expect(spans.map((span) => span.name)).toEqual(['execute_tool read_file']);
      expect(spans[0]!.attributes['tooltrace.end_reason']).toBe('shutdown');
      expect(spans[0]!.attributes['tooltrace.inflight']).toBeUndefined();
    });

    it('cuts it, exporting its snapshot in its place, when a later run resumes the replay', async () => {
      const spans = await shutDownWithAnOpenCall(true);
      expect(spans.map((span) => span.name)).toEqual(['execute_tool read_file (in flight)']);
      expect(spans[0]!.attributes).toMatchObject({
        'tooltrace.inflight': true,
        'tooltrace.end_reason': 'shutdown',
      });
    });
  });

  it('refuses resumable without derived ids, naming the setting', () => {
    // A code mistake, so a TypeError under the error rule (docs/errors.md).
    expect(() => traceReplay(new EventBus(), { resumable: true })).toThrow(
      new TypeError(
        'options.resumable needs options.idGenerator: a later run ends a cut span under the same span id only with ids derived from the events',
      ),
    );
  });
});
