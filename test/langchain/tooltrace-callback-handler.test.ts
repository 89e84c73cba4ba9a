import { trace } from '@opentelemetry/api';
import { dispatchCustomEvent } from '@langchain/core/callbacks/dispatch';
import type { Serialized } from '@langchain/core/load/serializable';
import { AIMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { TooltraceCallbackHandler, traceLangChainTools } from '../../src/langchain/index.js';
import { EventBus } from '../../src/bus/index.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { resetGlobals } from '../mcp/mcp-harness.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { ScriptedChatModel, StreamingScriptedChatModel } from './scripted-chat-model.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** A model that asks for `calls` in one message, then answers `done`. */
function modelCalling(...calls: { id: string; name: string; args: Record<string, unknown> }[]) {
  return new ScriptedChatModel([
    {
      message: new AIMessage({
        content: '',
        tool_calls: calls,
        usage_metadata: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
      }),
    },
    {
      message: new AIMessage({ content: 'done' }),
      tokenUsage: { promptTokens: 30, completionTokens: 2, totalTokens: 32 },
    },
  ]);
}

/** A generator tool: a chunk, a progress event, a custom event, a chunk per `q`, then its answer. */
function searchTool(seen: string[] = []) {
  return tool(
    async function* ({ q }, config) {
      seen.push(trace.getActiveSpan()?.spanContext().spanId ?? 'none');
      yield `looking for ${q}`;
      await dispatchCustomEvent('progress', { progress: 0.5 }, config);
      await dispatchCustomEvent('cache_miss', { key: q }, config);
      await new Promise((resolve) => setImmediate(resolve));
      seen.push(trace.getActiveSpan()?.spanContext().spanId ?? 'none');
      for (const letter of q) yield letter;
      return `found ${q}`;
    },
    {
      name: 'search',
      description: 'Searches the documents',
      schema: z.object({ q: z.string() }),
    },
  );
}

const inTimeOrder = (events: ReceivedSpan['events']) =>
  [...events]
    .sort((a, b) =>
      a.timeUnixNano < b.timeUnixNano ? -1 : a.timeUnixNano > b.timeUnixNano ? 1 : 0,
    )
    .map((event) => event.name);

const children = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((span) => span.parentSpanId === parent.spanId).map((span) => span.name);

describe('TooltraceCallbackHandler', () => {
  it('draws a LangGraph agent: the turn, a chat span per model call with its tokens, and the tool call with its stream', async () => {
    harness = await startTracingHarness({ register: true });
    const handler = new TooltraceCallbackHandler(harness.bus);
    const agent = createReactAgent({
      llm: modelCalling({ id: 'call_1', name: 'search', args: { q: 'otel' } }),
      tools: [searchTool()],
    });

    const output = await agent.invoke(
      { messages: [{ role: 'user', content: 'Find otel' }] },
      { callbacks: [handler], configurable: { thread_id: 'thread-7' } },
    );

    expect(output.messages.at(-1)?.content).toBe('done');
    const spans = await harness.spans(4);
    const turn = spans.find((span) => span.name === 'invoke_agent LangGraph')!;
    const call = spans.find((span) => span.name === 'execute_tool search')!;
    const chats = spans.filter((span) => span.name === 'chat scripted-1');
    expect(turn.parentSpanId).toBe('');
    expect(children(spans, turn).sort()).toEqual([
      'chat scripted-1',
      'chat scripted-1',
      'execute_tool search',
    ]);
    expect(turn.attributes['gen_ai.conversation.id']).toBe('thread-7');
    expect(chats.map((chat) => chat.attributes['gen_ai.usage.input_tokens'])).toEqual([12, 30]);
    expect(chats.map((chat) => chat.attributes['gen_ai.usage.output_tokens'])).toEqual([7, 2]);
    expect(call.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.description': 'Searches the documents',
      'gen_ai.conversation.id': 'thread-7',
      'tooltrace.stream.partial.count': 5,
      'tooltrace.stream.progress.count': 1,
      'tooltrace.stream.last_progress': 0.5,
    });
    // In time order: the custom event between the progress and the next chunk.
    expect(inTimeOrder(call.events)).toEqual([
      'tool.stream.partial',
      'tool.stream.progress',
      'cache_miss',
      'tool.stream.partial',
      'tool.stream.partial',
      'tool.stream.partial',
      'tool.stream.partial',
    ]);
    expect(call.status.code).toBe(1);
    // Linked to the chat whose answer asked for it.
    expect(call.links.map((link) => link.spanId)).toEqual([chats[0]!.spanId]);
    expect(handler.stats()).toMatchObject({ openRuns: 0, unknownRuns: 0, errors: 0 });
  });

  it('with traceLangChainTools, runs the tool code inside its span (between yields too), still one span per call', async () => {
    harness = await startTracingHarness({ register: true });
    const seen: string[] = [];
    const tools = traceLangChainTools([searchTool(seen)], harness.bus);
    const agent = createReactAgent({
      llm: modelCalling({ id: 'call_1', name: 'search', args: { q: 'ab' } }),
      tools,
    });
    const handler = new TooltraceCallbackHandler(harness.bus);

    await agent.invoke(
      { messages: [{ role: 'user', content: 'Find ab' }] },
      { callbacks: [handler] },
    );

    const spans = await harness.spans(4);
    const calls = spans.filter((span) => span.name === 'execute_tool search');
    expect(calls).toHaveLength(1);
    expect(seen).toEqual([calls[0]!.spanId, calls[0]!.spanId]);
    expect(calls[0]!.attributes['tooltrace.stream.partial.count']).toBe(3);
  });

  it('without traceLangChainTools, the tool code runs outside its span', async () => {
    harness = await startTracingHarness({ register: true });
    const seen: string[] = [];
    const agent = createReactAgent({
      llm: modelCalling({ id: 'call_1', name: 'search', args: { q: 'ab' } }),
      tools: [searchTool(seen)],
    });

    await agent.invoke(
      { messages: [{ role: 'user', content: 'Find ab' }] },
      { callbacks: [new TooltraceCallbackHandler(harness.bus)] },
    );

    const call = (await harness.spans(4)).find((span) => span.name === 'execute_tool search')!;
    expect(seen).not.toContain(call.spanId);
  });

  it('keeps concurrent calls apart: each its own span, stream and scope', async () => {
    harness = await startTracingHarness({ register: true });
    const seen: string[] = [];
    const agent = createReactAgent({
      llm: modelCalling(
        { id: 'call_1', name: 'search', args: { q: 'ab' } },
        { id: 'call_2', name: 'search', args: { q: 'wxyz' } },
      ),
      tools: traceLangChainTools([searchTool(seen)], harness.bus),
    });

    await agent.invoke(
      { messages: [{ role: 'user', content: 'Find both' }] },
      { callbacks: [new TooltraceCallbackHandler(harness.bus)] },
    );

    const spans = await harness.spans(5);
    const byId = new Map(
      spans
        .filter((span) => span.name === 'execute_tool search')
        .map((span) => [span.attributes['gen_ai.tool.call.id'], span]),
    );
    expect(byId.get('call_1')!.attributes['tooltrace.stream.partial.count']).toBe(3);
    expect(byId.get('call_2')!.attributes['tooltrace.stream.partial.count']).toBe(5);
    for (const span of byId.values()) {
      expect(span.attributes['tooltrace.stream.progress.count']).toBe(1);
      expect(span.events.filter((event) => event.name === 'cache_miss')).toHaveLength(1);
      // Each call's code ran in its own span, before and after its await.
      expect(seen.filter((spanId) => spanId === span.spanId)).toHaveLength(2);
    }
  });

  it('counts progress dispatched from a runnable the tool calls (two chains deep too) on the tool stream', async () => {
    harness = await startTracingHarness();
    const fetchPage = RunnableLambda.from(async (page: number, config) => {
      await dispatchCustomEvent('progress', { progress: page / 2 }, config);
      await dispatchCustomEvent('page_fetched', { page }, config);
      return `page ${page}`;
    });
    const fetchTwice = RunnableLambda.from(async (_input: null, config) => [
      await fetchPage.invoke(1, config),
      await fetchPage.invoke(2, config),
    ]);
    const crawl = tool(
      async (_input, config) => {
        await dispatchCustomEvent('progress', { progress: 0.1 }, config);
        return (await fetchTwice.invoke(null, config)).join(', ');
      },
      { name: 'crawl', description: 'Crawls', schema: z.object({}) },
    );
    const handler = new TooltraceCallbackHandler(harness.bus);

    await crawl.invoke(
      { id: 'call_1', name: 'crawl', args: {}, type: 'tool_call' },
      { callbacks: [handler] },
    );

    const [call] = await harness.spans(1);
    expect(call!.attributes).toMatchObject({
      'tooltrace.stream.progress.count': 3,
      'tooltrace.stream.last_progress': 1,
    });
    expect(inTimeOrder(call!.events)).toEqual([
      'tool.stream.progress',
      'tool.stream.progress',
      'page_fetched',
      'tool.stream.progress',
      'page_fetched',
    ]);
    expect(
      call!.events
        .filter((event) => event.name === 'tool.stream.progress')
        .map((event) => event.attributes['tooltrace.stream.sequence']),
    ).toEqual([1, 2, 3]);
    expect(handler.stats()).toMatchObject({ openRuns: 0, unknownRuns: 0, errors: 0 });
  });

  it('counts a streaming model chunks on its chat span, with the time to the first', async () => {
    harness = await startTracingHarness();
    const handler = new TooltraceCallbackHandler(harness.bus);
    const agent = createReactAgent({
      llm: new StreamingScriptedChatModel([
        { message: new AIMessage({ content: 'the answer is here' }) },
      ]),
      tools: [],
    });

    const streamed: string[] = [];
    for await (const [chunk] of await agent.stream(
      { messages: [{ role: 'user', content: 'Answer' }] },
      { callbacks: [handler], streamMode: 'messages' },
    )) {
      streamed.push(chunk.text);
    }

    expect(streamed.join('')).toBe('the answer is here');
    const spans = await harness.spans(2);
    const chat = spans.find((span) => span.name === 'chat scripted-1')!;
    expect(chat.attributes['tooltrace.llm.stream.chunks']).toBe(4);
    const firstChunk = chat.attributes['gen_ai.response.time_to_first_chunk'] as number;
    const duration = Number(chat.endTimeUnixNano - chat.startTimeUnixNano) / 1e9;
    expect(firstChunk).toBeGreaterThan(0);
    expect(firstChunk).toBeLessThan(duration);
    expect(chat.status.code).not.toBe(2);
    expect(handler.stats()).toMatchObject({ openRuns: 0, unknownRuns: 0, errors: 0 });
  });

  it('records a model call that throws as a failed chat span, error.type its name; the turn ends without an error status', async () => {
    harness = await startTracingHarness();
    class RateLimitError extends Error {
      override name = 'RateLimitError';
    }
    const handler = new TooltraceCallbackHandler(harness.bus);
    const agent = createReactAgent({
      llm: new ScriptedChatModel([{ error: new RateLimitError('429: slow down') }]),
      tools: [],
    });

    await expect(
      agent.invoke({ messages: [{ role: 'user', content: 'Answer' }] }, { callbacks: [handler] }),
    ).rejects.toThrow('429: slow down');

    const spans = await harness.spans(2);
    const chat = spans.find((span) => span.name === 'chat scripted-1')!;
    const turn = spans.find((span) => span.name === 'invoke_agent LangGraph')!;
    expect(chat.parentSpanId).toBe(turn.spanId);
    expect(chat.status).toEqual({ code: 2, message: '429: slow down' });
    expect(chat.attributes['error.type']).toBe('RateLimitError');
    expect(turn.status.code).toBe(0);
    expect(handler.stats()).toMatchObject({ openRuns: 0, unknownRuns: 0, errors: 0 });
  });

  it('records a tool that throws as a failed call, error.type its name, and the agent goes on', async () => {
    harness = await startTracingHarness();
    class QuotaError extends Error {
      override name = 'QuotaError';
    }
    const failing = tool(() => Promise.reject(new QuotaError('quota exceeded')), {
      name: 'search',
      description: 'Searches',
      schema: z.object({ q: z.string() }),
    });
    const agent = createReactAgent({
      llm: modelCalling({ id: 'call_1', name: 'search', args: { q: 'x' } }),
      tools: [failing],
    });

    const output = await agent.invoke(
      { messages: [{ role: 'user', content: 'Find x' }] },
      { callbacks: [new TooltraceCallbackHandler(harness.bus)] },
    );

    expect(output.messages.at(-1)?.content).toBe('done');
    const call = (await harness.spans(4)).find((span) => span.name === 'execute_tool search')!;
    expect(call.status).toEqual({ code: 2, message: 'quota exceeded' });
    expect(call.attributes['error.type']).toBe('QuotaError');
  });

  it('records a tool call aborted through its signal as cancelled, not failed', async () => {
    harness = await startTracingHarness();
    const controller = new AbortController();
    const slow = tool(
      async () => {
        controller.abort();
        await new Promise((resolve) => setImmediate(resolve));
        return 'too late';
      },
      { name: 'slow', description: 'Takes long', schema: z.object({}) },
    );

    await expect(
      slow.invoke(
        { id: 'call_1', name: 'slow', args: {}, type: 'tool_call' },
        { callbacks: [new TooltraceCallbackHandler(harness.bus)], signal: controller.signal },
      ),
    ).rejects.toThrow();

    const [call] = await harness.spans(1);
    expect(call!.attributes).toMatchObject({
      'error.type': 'cancelled',
      'tooltrace.tool.cancelled': true,
    });
  });

  it('records a tool call whose timeout signal fired as failed, error.type TimeoutError', async () => {
    harness = await startTracingHarness();
    const signal = AbortSignal.timeout(5);
    const slow = tool(
      async () => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        return 'too late';
      },
      { name: 'slow', description: 'Takes long', schema: z.object({}) },
    );

    await expect(
      slow.invoke(
        { id: 'call_1', name: 'slow', args: {}, type: 'tool_call' },
        { callbacks: [new TooltraceCallbackHandler(harness.bus)], signal },
      ),
    ).rejects.toThrow(expect.objectContaining({ name: 'TimeoutError' }));

    const [call] = await harness.spans(1);
    expect(call!.status.code).toBe(2);
    expect(call!.attributes['error.type']).toBe('TimeoutError');
    expect(call!.attributes['tooltrace.tool.cancelled']).toBeUndefined();
  });

  it('draws a graph run inside a tool as a sub-agent under the tool call', async () => {
    harness = await startTracingHarness({ register: true });
    const researcher = createReactAgent({
      llm: new ScriptedChatModel([{ message: new AIMessage({ content: 'inner answer' }) }]),
      tools: [],
      name: 'researcher',
    });
    const delegate = tool(
      async ({ task }, config) => {
        const result = await researcher.invoke(
          { messages: [{ role: 'user', content: task }] },
          config,
        );
        return result.messages.at(-1)?.text ?? '';
      },
      {
        name: 'delegate',
        description: 'Asks the researcher',
        schema: z.object({ task: z.string() }),
      },
    );
    const agent = createReactAgent({
      llm: modelCalling({ id: 'call_1', name: 'delegate', args: { task: 'dig' } }),
      tools: [delegate],
    });

    await agent.invoke(
      { messages: [{ role: 'user', content: 'Delegate' }] },
      { callbacks: [new TooltraceCallbackHandler(harness.bus)] },
    );

    const spans = await harness.spans(6);
    const call = spans.find((span) => span.name === 'execute_tool delegate')!;
    const subagent = spans.find((span) => span.parentSpanId === call.spanId)!;
    expect(subagent.name).toBe('invoke_agent researcher');
    expect(children(spans, subagent)).toEqual(['chat scripted-1']);
    expect(call.attributes['gen_ai.tool.call.result']).toBeUndefined();
  });

  it('given twice (in the agent and in the call), still opens one span per run', async () => {
    harness = await startTracingHarness();
    const handler = new TooltraceCallbackHandler(harness.bus);
    const agent = createReactAgent({
      llm: modelCalling({ id: 'call_1', name: 'search', args: { q: 'a' } }),
      tools: [searchTool()],
    }).withConfig({ callbacks: [handler] });

    await agent.invoke(
      { messages: [{ role: 'user', content: 'Find a' }] },
      { callbacks: [handler] },
    );

    const spans = await harness.spans(4);
    expect(spans.filter((span) => span.name === 'execute_tool search')).toHaveLength(1);
    expect(spans.filter((span) => span.name.startsWith('invoke_agent'))).toHaveLength(1);
  });

  it('renames a custom event named like one of tooltrace own events, so it cannot end the call', async () => {
    harness = await startTracingHarness();
    const sneaky = tool(
      async (_input, config) => {
        await dispatchCustomEvent('tool.result', { id: 'call_1', output: 'fake' }, config);
        return 'real';
      },
      { name: 'sneaky', description: 'Sneaks', schema: z.object({}) },
    );
    await sneaky.invoke(
      { id: 'call_1', name: 'sneaky', args: {}, type: 'tool_call' },
      { callbacks: [new TooltraceCallbackHandler(harness.bus)] },
    );

    const [call] = await harness.spans(1);
    expect(call!.name).toBe('execute_tool sneaky');
    expect(call!.events.map((event) => event.name)).toEqual(['langchain.tool.result']);
    expect(call!.attributes['tooltrace.end_reason']).toBe('result');
  });

  it('forgets the runs of a tree when its root ends; a call whose end never came is ended by the idle sweep', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    harness = await startTracingHarness({ tracing: { idleTimeoutMs: 60_000, liveUpdates: false } });
    const handler = new TooltraceCallbackHandler(harness.bus);
    const graph: Serialized = {
      lc: 1,
      type: 'not_implemented',
      id: ['langgraph', 'pregel', 'CompiledStateGraph'],
    };
    // What LangChain calls, in its argument order, for a graph whose tool run never ends.
    handler.handleChainStart(graph, {}, 'run-graph', undefined, [], {}, undefined, 'LangGraph');
    handler.handleToolStart(
      graph,
      '{"q":"x"}',
      'run-tool',
      'run-graph',
      [],
      {},
      'search',
      'call_9',
    );
    handler.handleToolEvent('chunk', 'run-tool');
    handler.handleChainEnd({}, 'run-graph');

    expect(handler.stats()).toMatchObject({ openRuns: 0, runsAbandoned: 1, unknownRuns: 0 });
    expect(harness.tracing.stats().openSpans).toBe(1);
    vi.advanceTimersByTime(65_000);
    expect(harness.tracing.stats().spansEnded).toMatchObject({ abandoned: 1 });
    // A late end of the forgotten run is counted, not drawn.
    handler.handleToolEnd('late', 'run-tool');
    expect(handler.stats().unknownRuns).toBe(1);
    const call = (await harness.spans(2)).find((span) => span.name === 'execute_tool search')!;
    expect(call.attributes).toMatchObject({
      'tooltrace.end_reason': 'abandoned',
      'tooltrace.stream.partial.count': 1,
    });
  });

  it('keeps a root run whose end never comes past the idle sweep and shutdown, until maxOpenRuns evicts it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    harness = await startTracingHarness({ tracing: { idleTimeoutMs: 60_000, liveUpdates: false } });
    const handler = new TooltraceCallbackHandler(harness.bus, { maxOpenRuns: 1 });
    const search: Serialized = { lc: 1, type: 'not_implemented', id: ['tools', 'search'] };
    handler.handleToolStart(search, '{}', 'run-1', undefined, [], {}, 'search', 'call_1');

    vi.advanceTimersByTime(65_000);
    await harness.tracing.shutdown();
    expect(harness.tracing.stats().spansEnded).toMatchObject({ abandoned: 1 });
    expect(handler.stats()).toMatchObject({ openRuns: 1, runsEvicted: 0 });

    handler.handleToolStart(search, '{}', 'run-2', undefined, [], {}, 'search', 'call_2');
    expect(handler.stats()).toMatchObject({ openRuns: 1, runsEvicted: 1, runsAbandoned: 0 });
    handler.handleToolEnd('late', 'run-1');
    expect(handler.stats().unknownRuns).toBe(1);
  });

  it('forgets the oldest run past maxOpenRuns, and counts it', () => {
    const handler = new TooltraceCallbackHandler(new EventBus(), { maxOpenRuns: 2 });
    const chain: Serialized = {
      lc: 1,
      type: 'not_implemented',
      id: ['langchain_core', 'runnables', 'RunnableSequence'],
    };
    for (const runId of ['a', 'b', 'c']) {
      handler.handleChainStart(chain, {}, runId, undefined, [], {}, undefined, runId);
    }
    expect(handler.stats()).toMatchObject({ openRuns: 2, runsEvicted: 1 });
    handler.handleChainEnd({}, 'a');
    expect(handler.stats()).toMatchObject({ openRuns: 2, unknownRuns: 1 });
  });

  it('refuses a bus that is not an EventBus and a maxOpenRuns that is not a positive integer, naming them', () => {
    expect(() => new TooltraceCallbackHandler({} as EventBus)).toThrow(TypeError);
    expect(() => new TooltraceCallbackHandler({} as EventBus)).toThrow(/needs an EventBus/);
    expect(() => new TooltraceCallbackHandler(new EventBus(), { maxOpenRuns: 0 })).toThrow(
      RangeError,
    );
    expect(() => new TooltraceCallbackHandler(new EventBus(), { maxOpenRuns: 0 })).toThrow(
      /maxOpenRuns must be a positive integer/,
    );
  });
});
