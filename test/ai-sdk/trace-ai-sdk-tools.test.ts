import { trace } from '@opentelemetry/api';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_RESULT, type ToolResult } from '../../src/events/index.js';
import { traceAiSdkTools, type AiSdkToolCallOptions } from '../../src/ai-sdk/index.js';
import { resetGlobals } from '../mcp/mcp-harness.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model that asks for `toolName` once, then answers with text. */
function modelCalling(toolName: string, input: unknown): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          { type: 'tool-call', toolCallId: 'call_1', toolName, input: JSON.stringify(input) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: USAGE,
        warnings: [],
      },
      {
        content: [{ type: 'text', text: 'done' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: USAGE,
        warnings: [],
      },
    ],
    doStream: [
      {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'tool-call', toolCallId: 'call_1', toolName, input: JSON.stringify(input) },
          {
            type: 'finish',
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage: USAGE,
          },
        ]),
      },
      {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't1' },
          { type: 'text-delta', id: 't1', delta: 'done' },
          { type: 'text-end', id: 't1' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE },
        ]),
      },
    ],
  });
}

const FINAL = { city: 'Paris', forecast: ['sun', 'rain', 'sun'] };

/** A generator tool: two preliminary results, then the final one (also a preliminary one). */
function forecastTool(seen: { spanId?: string } = {}) {
  return tool({
    description: 'Forecasts the weather',
    inputSchema: jsonSchema<{ city: string }>({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    }),
    async *execute({ city }) {
      seen.spanId = trace.getActiveSpan()?.spanContext().spanId;
      yield { city, status: 'loading' as const };
      await new Promise((resolve) => setImmediate(resolve));
      yield { city, status: 'half' as const };
      yield FINAL;
    },
  });
}

describe('traceAiSdkTools()', () => {
  it('gives a generator tool run by generateText a span with the toolCallId and a partial per preliminary result, and returns its final output unchanged', async () => {
    harness = await startTracingHarness({ register: true });
    const seen: { spanId?: string } = {};
    const tools = traceAiSdkTools({ forecast: forecastTool(seen) }, harness.bus);

    const result = await generateText({
      model: modelCalling('forecast', { city: 'Paris' }),
      tools,
      prompt: 'Weather in Paris?',
      stopWhen: stepCountIs(2),
    });

    expect(result.text).toBe('done');
    const [toolResult] = result.steps[0]!.toolResults;
    expect(toolResult).toMatchObject({ toolCallId: 'call_1', toolName: 'forecast' });
    expect(toolResult!.output).toBe(FINAL);
    const span = await harness.span('execute_tool forecast');
    expect(span.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.description': 'Forecasts the weather',
      'tooltrace.stream.partial.count': 3,
    });
    expect(span.events.filter((event) => event.name === 'tool.stream.partial')).toHaveLength(3);
    expect(span.status.code).toBe(1);
    // The tool's own code, between its yields, ran inside its span.
    expect(seen.spanId).toBe(span.spanId);
  });

  it('draws the same span for a long stream whether the tracer is its only subscriber or another listens too', async () => {
    /** The span of one call of 100 preliminary results, with a second subscriber or without. */
    const spanOf = async (listen: boolean): Promise<{ span: ReceivedSpan; heard: number }> => {
      harness = await startTracingHarness();
      let heard = 0;
      if (listen) harness.bus.subscribe('tool.stream.partial', () => void (heard += 1));
      const tools = traceAiSdkTools(
        {
          count: {
            description: 'Counts',
            // eslint-disable-next-line @typescript-eslint/require-await -- a generator tool that only yields
            async *execute() {
              for (let index = 1; index <= 100; index += 1) yield `part ${index}`;
            },
          },
        },
        harness.bus,
      );
      const execute = tools.count.execute as (
        input: unknown,
        options: AiSdkToolCallOptions,
      ) => unknown;
      const output = execute(undefined, { toolCallId: 'call_1' });
      for await (const value of output as AsyncIterable<unknown>) expect(value).toMatch(/^part/);
      const span = await harness.span('execute_tool count');
      await harness.close();
      harness = undefined;
      return { span, heard };
    };
    const alone = await spanOf(false);
    const beside = await spanOf(true);

    expect(beside.heard).toBe(100);
    const shape = ({ span }: { span: ReceivedSpan }) => ({
      attributes: Object.fromEntries(
        // Event ids are random and times differ; everything else must be the same.
        Object.entries(span.attributes).filter(([key]) => !/event\.id$|_ms$/.test(key)),
      ),
      events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
    });
    expect(shape(alone)).toEqual(shape(beside));
    expect(alone.span.attributes).toMatchObject({
      'tooltrace.stream.partial.count': 100,
      'tooltrace.stream.events.recorded': 59,
      'tooltrace.stream.events.coalesced': 41,
    });
    expect(alone.span.events.at(-1)?.attributes['tooltrace.stream.sequence']).toBe(100);
  });

  it('passes streamText the same preliminary and final results, and traces them the same way', async () => {
    harness = await startTracingHarness({ register: true });
    const tools = traceAiSdkTools({ forecast: forecastTool() }, harness.bus);

    const stream = streamText({
      model: modelCalling('forecast', { city: 'Paris' }),
      tools,
      prompt: 'Weather in Paris?',
      stopWhen: stepCountIs(2),
    });
    const toolResults: { preliminary?: boolean; output: unknown }[] = [];
    for await (const part of stream.fullStream) {
      if (part.type === 'tool-result')
        toolResults.push({ preliminary: part.preliminary, output: part.output });
    }

    expect(toolResults.map((part) => part.preliminary)).toEqual([true, true, true, undefined]);
    expect(toolResults.at(-1)!.output).toBe(FINAL);
    const span = await harness.span('execute_tool forecast');
    expect(span.attributes['gen_ai.tool.call.id']).toBe('call_1');
    expect(span.events.filter((event) => event.name === 'tool.stream.partial')).toHaveLength(3);
  });

  it('records a throw as a failed result with the error name as error.type, and rethrows it to the AI SDK', async () => {
    harness = await startTracingHarness({ register: true });
    const results: ToolResult[] = [];
    harness.bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
    const tools = traceAiSdkTools(
      {
        lookup: tool({
          inputSchema: jsonSchema<{ id: string }>({
            type: 'object',
            properties: { id: { type: 'string' } },
          }),
          execute: async (): Promise<string> => {
            await new Promise((resolve) => setImmediate(resolve));
            throw new RangeError('id out of range');
          },
        }),
      },
      harness.bus,
    );

    const result = await generateText({
      model: modelCalling('lookup', { id: 'x' }),
      tools,
      prompt: 'Look it up',
      stopWhen: stepCountIs(2),
    });

    const errorPart = result.steps[0]!.content.find((part) => part.type === 'tool-error');
    expect(errorPart).toMatchObject({
      toolCallId: 'call_1',
      error: new RangeError('id out of range'),
    });
    expect(results).toMatchObject([
      { id: 'call_1', error: 'id out of range', errorType: 'RangeError' },
    ]);
    const span = await harness.span('execute_tool lookup');
    expect(span.status).toEqual({ code: 2, message: 'id out of range' });
    expect(span.attributes['error.type']).toBe('RangeError');
  });

  it('marks an aborted call cancelled', async () => {
    harness = await startTracingHarness();
    const results: ToolResult[] = [];
    harness.bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
    const tools = traceAiSdkTools(
      {
        slow: {
          execute: (_input: unknown, { abortSignal }: AiSdkToolCallOptions) =>
            new Promise((_, reject) =>
              abortSignal?.addEventListener('abort', () => reject(abortSignal.reason as Error)),
            ),
        },
      },
      harness.bus,
    );
    const controller = new AbortController();
    const running = tools.slow.execute(
      {},
      { toolCallId: 'call_9', abortSignal: controller.signal },
    );
    controller.abort(new Error('user pressed stop'));

    await expect(running).rejects.toThrow('user pressed stop');
    expect(results).toMatchObject([{ id: 'call_9', cancelled: true, error: 'user pressed stop' }]);
    const span = await harness.span('execute_tool slow');
    expect(span.attributes).toMatchObject({
      'error.type': 'cancelled',
      'tooltrace.tool.cancelled': true,
    });
  });

  it('keeps tools without execute, and every other field of a tool, as they are', () => {
    const harnessless = { emitVetoable: () => ({ vetoed: false }) } as never;
    const schemaOnly = { description: 'client-side', inputSchema: jsonSchema({ type: 'object' }) };
    const withExecute = { description: 'server-side', title: 'Server', execute: () => 1 };
    const traced = traceAiSdkTools({ schemaOnly, withExecute }, harnessless);
    expect(traced.schemaOnly).toBe(schemaOnly);
    expect(traced.withExecute).toMatchObject({ description: 'server-side', title: 'Server' });
    expect(traced.withExecute.execute).not.toBe(withExecute.execute);
  });
});
