import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { inputRequired, McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_INVOKE, TOOL_RESULT, type ToolResult } from '../../src/events/index.js';
import { McpInputError, mcpTools, serveMcpTools } from '../../src/mcp/index.js';
import { traceToolCalls, type ToolCallTracing } from '../../src/otel/index.js';
import type { ChannelTool, ToolEvent } from '../../src/streamtool/index.js';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';
import { startModernHttpServer, type ModernHttpServer } from './modern-http-server.js';

let harness: TracingHarness | undefined;
let serverTracing: ToolCallTracing | undefined;
let http: ModernHttpServer | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await http?.close();
  http = undefined;
  await serverTracing?.shutdown();
  serverTracing = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** Deletes files, asking first how many of the 40 it found may go, then which color to log. */
const deleteFiles: ChannelTool = {
  name: 'delete_files',
  async *stream(_signal, input, context): AsyncGenerator<ToolEvent> {
    yield { kind: 'progress', progress: 0.25, payload: 'found 40 files' };
    if (context?.requestInput === undefined) throw new Error('cannot ask');
    const confirm = await context.requestInput({
      key: 'confirm',
      method: 'elicitation/create',
      params: {
        message: `Delete these 40 files in ${String(input.folder)}?`,
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      },
    });
    if (confirm.action !== 'accept') {
      yield { kind: 'complete', payload: 'kept all 40' };
      return;
    }
    yield { kind: 'partial', payload: 'deleted 20 of 40' };
    const summary = await context.requestInput({
      method: 'sampling/createMessage',
      params: {
        messages: [{ role: 'user', content: { type: 'text', text: 'Summarize' } }],
        maxTokens: 20,
      },
    });
    const text = (summary.content as { text: string }).text;
    yield { kind: 'complete', payload: `deleted 40: ${text}` };
  },
};

const FOLDER = { folder: z.string() };

/** A 2.x server for `tool` per request over Streamable HTTP, its calls emitted on `bus`. */
async function serve(bus: EventBus, tool: ChannelTool = deleteFiles): Promise<string> {
  http = await startModernHttpServer(() => {
    const server = new McpServer({ name: 'files', version: '2.0.0' });
    serveMcpTools(server, [{ tool, description: 'Deletes files', inputSchema: FOLDER }], { bus });
    return server;
  });
  return http.url;
}

/** A 2.x client of `url` speaking MCP 2026-07-28, declaring `capabilities`. */
async function modernClient(url: string, capabilities: Record<string, object>): Promise<Client> {
  const client = new Client(
    { name: 'agent', version: '2.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

/** What a span says in words: its attributes and its events' attributes. */
function textOf(span: ReceivedSpan): unknown {
  return [span.attributes, span.events.map((event) => event.attributes)];
}

function inputEvents(span: ReceivedSpan): string[] {
  return span.events
    .filter((event) => event.attributes['tooltrace.mcp.input.status'] !== undefined)
    .map(
      (event) =>
        `${String(event.attributes['tooltrace.mcp.input.method'])} ` +
        `${String(event.attributes['tooltrace.mcp.input.status'])}`,
    );
}

describe('a served ChannelTool that asks for input, over MCP 2026-07-28', () => {
  it('is one call on each side however many requests carried it: each question and answer an event of its one span', async () => {
    harness = await startTracingHarness({ register: true });
    const serverBus = new EventBus();
    serverTracing = traceToolCalls(serverBus, { tracerProvider: harness.provider });
    const invokes: unknown[] = [];
    serverBus.subscribe(TOOL_INVOKE, (event) => void invokes.push(event.payload));
    const client = await modernClient(await serve(serverBus), { elicitation: {}, sampling: {} });
    const asked: string[] = [];
    const tools = await mcpTools(client, {
      inputHandler: (question) => {
        asked.push(`${question.method} ${question.key}`);
        return question.method === 'elicitation/create'
          ? { action: 'accept', content: { ok: true } }
          : { role: 'assistant', content: { type: 'text', text: 'all gone' }, model: 'm' };
      },
    });
    attachTools(harness.bus, tools);

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'delete_files',
      arguments: { folder: 'tmp' },
    });

    expect(JSON.parse(result.output)).toEqual({
      content: [{ type: 'text', text: 'deleted 40: all gone' }],
    });
    expect(asked).toEqual(['elicitation/create confirm', 'sampling/createMessage input_1']);
    // Three requests went to the server (two answered questions); one call ran there.
    expect(invokes).toHaveLength(1);
    await serverTracing.forceFlush();
    const spans = (await harness.spans(2)).filter(
      (span) => span.name === 'execute_tool delete_files',
    );
    // One span on each side: the client's call and the served one, whatever the requests.
    expect(spans).toHaveLength(2);
    const clientSpan = spans.find((span) => span.attributes['gen_ai.tool.call.id'] === 'tc_1')!;
    const servedSpan = spans.find((span) => span !== clientSpan)!;
    expect(servedSpan.parentSpanId).toBe(clientSpan.spanId);
    for (const span of [clientSpan, servedSpan]) {
      expect(inputEvents(span)).toEqual([
        'elicitation/create requested',
        'elicitation/create accepted',
        'sampling/createMessage requested',
        'sampling/createMessage answered',
      ]);
      expect(span.attributes).toMatchObject({
        'mcp.protocol.version': '2026-07-28',
        'tooltrace.mcp.input.rounds': 2,
      });
      expect(span.attributes['mcp.session.id']).toBeUndefined();
      // No content capture: the question's text is nowhere on the span.
      expect(JSON.stringify(textOf(span))).not.toContain('Delete these 40 files');
    }
  });

  it('fails a call of a tool that asks at once when mcpTools has no inputHandler, naming the option', async () => {
    const client = await modernClient(await serve(new EventBus()), { elicitation: {} });
    const bus = new EventBus();
    attachTools(bus, await mcpTools(client));
    const result = await callTool(bus, {
      id: 'tc_1',
      name: 'delete_files',
      arguments: { folder: 'tmp' },
    });
    expect(result.error).toMatch(
      /asked for input \(elicitation\/create "confirm"\).*no inputHandler/,
    );
  });

  it('refuses a tampered requestState with the JSON-RPC error -32602, and goes on from the real one', async () => {
    const client = await modernClient(await serve(new EventBus()), { elicitation: {} });
    const first = (await client.callTool(
      { name: 'delete_files', arguments: { folder: 'tmp' } },
      { allowInputRequired: true },
    )) as unknown as { resultType: string; requestState: string };
    expect(first.resultType).toBe('input_required');
    const answer = { confirm: { action: 'decline' } };
    const retry = (requestState: string) =>
      client.callTool(
        {
          name: 'delete_files',
          arguments: { folder: 'tmp' },
          inputResponses: answer,
          requestState,
        } as never,
        { allowInputRequired: true },
      );

    await expect(retry(`${first.requestState}x`)).rejects.toMatchObject({ code: -32602 });
    const forged = first.requestState.replace(
      /^tt1\.[^.]*/,
      `tt1.${Buffer.from('{"c":"x","r":1,"t":"delete_files","e":9e15}').toString('base64url')}`,
    );
    await expect(retry(forged)).rejects.toMatchObject({ code: -32602 });
    expect(await retry(first.requestState)).toMatchObject({
      content: [{ type: 'text', text: 'kept all 40' }],
    });
    // Answered once: the same state again names a call that no longer waits.
    await expect(retry(first.requestState)).rejects.toMatchObject({ code: -32602 });
  });

  it('refuses a question the client has no capability for with -32021, naming the capability', async () => {
    const bus = new EventBus();
    const results: ToolResult[] = [];
    bus.subscribe<ToolResult>(TOOL_RESULT, (event) => void results.push(event.payload));
    const client = await modernClient(await serve(bus), { sampling: {} });
    await expect(
      client.callTool(
        { name: 'delete_files', arguments: { folder: 'tmp' } },
        { allowInputRequired: true },
      ),
    ).rejects.toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    expect(results.map((result) => result.error)).toEqual([
      expect.stringContaining('did not declare the "elicitation" capability'),
    ]);
  });

  it('takes answers given up front without a round, and asks again for a missing one', async () => {
    const client = await modernClient(await serve(new EventBus()), { elicitation: {} });
    expect(
      await client.callTool(
        {
          name: 'delete_files',
          arguments: { folder: 'tmp' },
          inputResponses: { confirm: { action: 'decline' }, unrelated: { action: 'accept' } },
        } as never,
        { allowInputRequired: true },
      ),
    ).toMatchObject({ content: [{ type: 'text', text: 'kept all 40' }] });
    const first = (await client.callTool(
      { name: 'delete_files', arguments: { folder: 'tmp' } },
      { allowInputRequired: true },
    )) as unknown as { requestState: string };
    const again = await client.callTool(
      {
        name: 'delete_files',
        arguments: { folder: 'tmp' },
        inputResponses: { wrong_key: { action: 'accept' } },
        requestState: first.requestState,
      } as never,
      { allowInputRequired: true },
    );
    expect(again).toMatchObject({
      resultType: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
  });
});

it('carries every stream event of the later requests to the caller: progress counts start again with each request', async () => {
  // Each request of the call has its own progress token, so the server counts 1, 2, … again
  // on the request that brought the answer; a caller that compared across requests lost the
  // first events after every answer (here "deleted a.log").
  const cleanUp: ChannelTool = {
    name: 'clean_up',
    async *stream(_signal, _input, context): AsyncGenerator<ToolEvent> {
      yield { kind: 'progress', progress: 0.1, payload: 'found 3 files' };
      await context!.requestInput!({
        key: 'confirm',
        method: 'elicitation/create',
        params: { message: 'Delete?', requestedSchema: { type: 'object', properties: {} } },
      });
      for (const file of ['a.log', 'b.log', 'c.log']) {
        yield { kind: 'partial', payload: `deleted ${file}` };
      }
      yield { kind: 'complete', payload: 'deleted 3 files' };
    },
  };
  const client = await modernClient(await serve(new EventBus(), cleanUp), { elicitation: {} });
  const bus = new EventBus();
  attachTools(bus, await mcpTools(client, { inputHandler: () => ({ action: 'accept' }) }));
  const heard: unknown[] = [];
  bus.subscribe('tool.stream.progress', (event) => {
    const { payload } = event.payload as { payload: unknown };
    if (typeof payload === 'string') heard.push(payload);
  });

  await callTool(bus, { id: 'tc_1', name: 'clean_up', arguments: { folder: 'tmp' } });

  expect(heard).toEqual(['found 3 files', 'deleted a.log', 'deleted b.log', 'deleted c.log']);
});

describe('mcpTools() calling a tool the 2.x SDK serves on its own, with an output schema, that asks', () => {
  it('answers its input_required result through the inputHandler and gets the structured result', async () => {
    http = await startModernHttpServer(() => {
      const server = new McpServer({ name: 'greeter', version: '2.0.0' });
      server.registerTool('greet', { outputSchema: z.object({ greeting: z.string() }) }, (ctx) => {
        const answer = ctx.mcpReq.inputResponses?.user_name as
          { action: string; content?: { name?: string } } | undefined;
        if (answer?.action !== 'accept') {
          return inputRequired({
            inputRequests: {
              user_name: inputRequired.elicit({
                message: 'What is your name?',
                requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
              }),
            },
          });
        }
        const greeting = `Hello, ${String(answer.content?.name)}!`;
        return { content: [{ type: 'text', text: greeting }], structuredContent: { greeting } };
      });
      return server;
    });
    const client = await modernClient(http.url, { elicitation: {} });
    const bus = new EventBus();
    attachTools(
      bus,
      await mcpTools(client, {
        inputHandler: () => ({ action: 'accept', content: { name: 'Ada' } }),
      }),
    );
    const result = await callTool(bus, { id: 'tc_1', name: 'greet', arguments: {} });
    // The 2.x client checks the output schema on the input_required answer too, unless told the
    // definition without it.
    expect(result.error).toBeUndefined();
    expect(JSON.parse(result.output)).toMatchObject({
      structuredContent: { greeting: 'Hello, Ada!' },
    });
  });
});

describe('a served ChannelTool that asks for input, for a MCP 2025-11-25 client', () => {
  it('asks with the server’s own elicitation request: the same tool code, one span with the round as events', async () => {
    harness = await startTracingHarness({ register: true, tracing: { captureContent: true } });
    const client = new Client(
      { name: 'agent', version: '2.0.0' },
      { capabilities: { elicitation: {}, sampling: {} } },
    );
    client.setRequestHandler('elicitation/create', () => ({
      action: 'accept',
      content: { ok: true },
    }));
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'done' },
      model: 'm',
    }));
    const server = new McpServer({ name: 'files', version: '2.0.0' });
    serveMcpTools(server, [{ tool: deleteFiles, inputSchema: FOLDER }], { bus: harness.bus });
    const { InMemoryTransport } = await import('@modelcontextprotocol/server');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    clients.push(client);
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');

    const result = await client.callTool({ name: 'delete_files', arguments: { folder: 'tmp' } });

    expect(result).toMatchObject({ content: [{ type: 'text', text: 'deleted 40: done' }] });
    const span = await harness.span('execute_tool delete_files');
    expect(inputEvents(span)).toEqual([
      'elicitation/create requested',
      'elicitation/create accepted',
      'sampling/createMessage requested',
      'sampling/createMessage answered',
    ]);
    expect(span.attributes['mcp.protocol.version']).toBe('2025-11-25');
    // Content capture on: the question is on its event.
    expect(JSON.stringify(textOf(span))).toContain('Delete these 40 files in tmp?');
  });
});

it('McpInputError is a TooltraceError with its kind', () => {
  const error = new McpInputError('no-handler', 'x');
  expect([error.name, error.kind, error.code]).toEqual(['McpInputError', 'no-handler', undefined]);
});
