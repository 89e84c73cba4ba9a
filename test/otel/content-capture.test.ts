import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBus } from '../../src/bus/index.js';
import type { TraceToolCallsOptions } from '../../src/otel/index.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { startTracingHarness, type TracingHarness } from './tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  diag.disable();
});

const SECRET_ARGUMENT = 'argument-text-7f3a';
const SECRET_PAYLOAD = 'payload-text-91c2';
const SECRET_PROGRESS = 'progress-text-44d0';
const SECRET_OUTPUT = 'output-text-0b8e';

/** One call whose every piece of content carries a marker string. */
function runCall(bus: EventBus, output: string = SECRET_OUTPUT): void {
  const invoke = bus.emit('tool.invoke', {
    id: 'tc_1',
    name: 'search',
    arguments: { query: SECRET_ARGUMENT, apiKey: 'sk-abcdefghijklmnop1234' },
  });
  const child = { causation: { parentId: invoke.id } };
  const stream = { tool_name: 'search', tool_id: 'tc_1', turn_id: '' };
  bus.emit(
    'tool.stream.progress',
    { ...stream, sequence: 1, progress: 0.5, payload: SECRET_PROGRESS },
    child,
  );
  bus.emit(
    'tool.stream.partial',
    { ...stream, sequence: 2, payload: `${SECRET_PAYLOAD} Authorization: Bearer abcdefghijklmnop` },
    child,
  );
  bus.emit('tool.result', { id: 'tc_1', name: 'search', output }, child);
}

/** Every string anywhere in a span: attributes, event attributes, status message. */
function allText(span: ReceivedSpan): string {
  return JSON.stringify(
    [span.attributes, span.events, span.status, span.name],
    (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
  );
}

async function traced(options: TraceToolCallsOptions, output?: string): Promise<ReceivedSpan> {
  harness = await startTracingHarness({ tracing: options });
  runCall(harness.bus, output);
  const [span] = await harness.spans(1);
  return span!;
}

describe('traceToolCalls()', () => {
  describe('content capture', () => {
    it('records no argument, payload or output text when off (the default)', async () => {
      delete process.env['TOOLTRACE_CAPTURE_CONTENT'];
      delete process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'];
      const text = allText(await traced({}));
      for (const secret of [SECRET_ARGUMENT, SECRET_PAYLOAD, SECRET_PROGRESS, SECRET_OUTPUT]) {
        expect(text).not.toContain(secret);
      }
      expect(text).not.toContain('gen_ai.tool.call.arguments');
      expect(text).not.toContain('gen_ai.tool.call.result');
      expect(text).not.toContain('tooltrace.stream.payload"');
    });

    it('records content, redacted, when on', async () => {
      const span = await traced({ captureContent: true });
      expect(span.attributes['gen_ai.tool.call.arguments']).toBe(
        JSON.stringify({ query: SECRET_ARGUMENT, apiKey: '[REDACTED]' }),
      );
      expect(span.attributes['gen_ai.tool.call.result']).toBe(SECRET_OUTPUT);
      expect(span.events[0]!.attributes['tooltrace.stream.payload']).toBe(SECRET_PROGRESS);
      expect(span.events[1]!.attributes['tooltrace.stream.payload']).toBe(
        `${SECRET_PAYLOAD} Authorization: [REDACTED]`,
      );
      expect(allText(span)).not.toContain('abcdefghijklmnop');
    });

    for (const variable of [
      'TOOLTRACE_CAPTURE_CONTENT',
      'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
    ]) {
      it(`turns on with ${variable}=true when the option is not given`, async () => {
        process.env[variable] = 'true';
        try {
          const span = await traced({});
          expect(span.attributes['gen_ai.tool.call.result']).toBe(SECRET_OUTPUT);
          await harness!.close();
          harness = undefined;
          expect(allText(await traced({ captureContent: false }))).not.toContain(SECRET_OUTPUT);
        } finally {
          delete process.env[variable];
        }
      });
    }

    it('cuts every captured value to maxContentBytes on a character boundary', async () => {
      const output = 'é'.repeat(100);
      const span = await traced({ captureContent: true, maxContentBytes: 64 }, output);
      const result = span.attributes['gen_ai.tool.call.result'] as string;
      expect(Buffer.byteLength(result)).toBeLessThanOrEqual(64);
      expect(result).toBe(`${'é'.repeat(30)}…`);
      expect(result).not.toContain('\uFFFD');
    });

    it('passes captured values through a custom redact hook with their key', async () => {
      const keys: string[] = [];
      const span = await traced({
        captureContent: true,
        redact: (key, value) => {
          keys.push(key);
          return value.toUpperCase();
        },
      });
      expect(span.attributes['gen_ai.tool.call.result']).toBe(SECRET_OUTPUT.toUpperCase());
      expect(keys).toEqual(
        expect.arrayContaining([
          'gen_ai.tool.call.arguments',
          'tooltrace.stream.payload',
          'gen_ai.tool.call.result',
        ]),
      );
    });

    it('drops a value whose redact hook throws, counts it and reports it once', async () => {
      const messages: string[] = [];
      const logger: DiagLogger = {
        error: (message) => messages.push(message),
        warn: () => {},
        info: () => {},
        debug: () => {},
        verbose: () => {},
      };
      diag.setLogger(logger, DiagLogLevel.ERROR);
      const span = await traced({
        captureContent: true,
        redact: () => {
          throw new Error('redactor down');
        },
      });
      expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
      expect(span.attributes['gen_ai.tool.call.result']).toBeUndefined();
      expect(allText(span)).not.toContain(SECRET_OUTPUT);
      expect(harness!.tracing.stats().errors.redact).toBe(4);
      expect(messages.filter((message) => message.includes('redact'))).toHaveLength(1);
    });

    it('redacts error messages even with capture off', async () => {
      harness = await startTracingHarness();
      const invoke = harness.bus.emit('tool.invoke', { id: 'tc_1', name: 'db', arguments: {} });
      harness.bus.emit(
        'tool.result',
        { id: 'tc_1', name: 'db', output: '', error: 'login failed: password=hunter22' },
        { causation: { parentId: invoke.id } },
      );
      const [span] = await harness.spans(1);
      expect(span!.status.message).toBe('login failed: password=[REDACTED]');
      expect(allText(span!)).not.toContain('hunter22');
    });
  });
});
