import { setTimeout as sleep } from 'node:timers/promises';
import {
  createRequestStateCodec,
  inputRequired,
  McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * The tools of the conformance suite's MCP 2026-07-28 tools-scope server scenarios registered on
 * the 2.x `McpServer` alone — no tooltrace — answering as the tooltrace tools of
 * `conformance-servers.ts` and `conformance-tools-2026.ts` do: the baseline `serveMcpTools` is
 * measured against (which scenarios the SDK alone passes). A tool that asks for input does it the
 * SDK's way: it answers `inputRequired(...)` and is called again with `ctx.mcpReq.inputResponses`
 * and the `requestState` it sealed with the SDK's own codec.
 */

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = Buffer.concat([
  Buffer.from('RIFF', 'ascii'),
  Buffer.from([44, 0, 0, 0]),
  Buffer.from('WAVEfmt ', 'ascii'),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0]),
  Buffer.from('data', 'ascii'),
  Buffer.from([8, 0, 0, 0]),
  Buffer.alloc(8, 0x80),
]).toString('base64');

type Content = { type: 'text'; text: string };
function text(value: string): { content: Content[] } {
  return { content: [{ type: 'text', text: value }] };
}

const codec = createRequestStateCodec<{ step: number; name?: string }>({
  key: new Uint8Array(32).fill(7),
});

function elicit(message: string, property: string, type: 'string' | 'boolean') {
  return inputRequired.elicit({
    message,
    requestedSchema: {
      type: 'object',
      properties: { [property]: { type } },
      required: [property],
    } as never,
  });
}

function sample(question: string, maxTokens: number) {
  return inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: question } }],
    maxTokens,
  });
}

/** An answer given under `key`, when it is there. */
function answerTo(ctx: ServerContext, key: string): Record<string, unknown> | undefined {
  const answer = ctx.mcpReq.inputResponses?.[key];
  return answer !== null && typeof answer === 'object'
    ? (answer as Record<string, unknown>)
    : undefined;
}

function field(answer: Record<string, unknown>, property: string): string {
  const content = answer.content as Record<string, unknown> | undefined;
  return answer.action === 'accept' ? String(content?.[property]) : String(answer.action);
}

function sampled(answer: Record<string, unknown>): string {
  const content = answer.content as { text?: unknown } | undefined;
  return typeof content?.text === 'string' ? content.text : JSON.stringify(answer.content);
}

/** Asks the client's name by elicitation, then greets it (two conformance tools do this). */
function askName(ctx: ServerContext) {
  const answer = answerTo(ctx, 'user_name');
  if (answer === undefined) {
    return inputRequired({
      inputRequests: { user_name: elicit('What is your name?', 'name', 'string') },
    });
  }
  return text(`Hello, ${field(answer, 'name')}!`);
}
function declared(ctx: ServerContext): Record<string, unknown> {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.['io.modelcontextprotocol/clientCapabilities'] ?? {}) as Record<
    string,
    unknown
  >;
}

/** A 2.x `McpServer` with the suite's tools, on the SDK alone. */
export function sdkAloneServer(): McpServer {
  const server = new McpServer(
    { name: 'sdk-alone-conformance', version: '2.0.0' },
    { requestState: { verify: (state, ctx) => codec.verify(state, ctx) } },
  );
  const plain = (name: string, result: () => object): void => {
    server.registerTool(name, { description: name }, async () => {
      await sleep(1);
      return result() as never;
    });
  };
  plain('test_simple_text', () => text('This is a simple text response for testing.'));
  plain('test_image_content', () => ({
    content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
  }));
  plain('test_audio_content', () => ({
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  }));
  plain('test_embedded_resource', () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }));
  plain('test_multiple_content_types', () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
      },
    ],
  }));
  plain('test_error_handling', () => ({
    ...text('This tool intentionally returns an error for testing'),
    isError: true,
  }));
  server.registerTool('test_tool_with_progress', { description: 'progress' }, async (ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress, total: 100 },
        });
      }
      if (progress < 100) await sleep(50);
    }
    return text('progress reported: 0%, 50%, 100%');
  });
  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'test_input_required_result_elicitation' },
    askName,
  );
  server.registerTool(
    'test_input_required_result_sampling',
    { description: 'test_input_required_result_sampling' },
    (ctx) => {
      const answer = answerTo(ctx, 'capital_question');
      if (answer === undefined) {
        return inputRequired({
          inputRequests: { capital_question: sample('What is the capital of France?', 100) },
        });
      }
      return text(`The model said: ${sampled(answer)}`);
    },
  );
  server.registerTool(
    'test_input_required_result_list_roots',
    { description: 'test_input_required_result_list_roots' },
    (ctx) => {
      const answer = answerTo(ctx, 'client_roots');
      if (!Array.isArray(answer?.roots)) {
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      }
      const roots = (answer.roots as { uri?: unknown }[]).map((root) => String(root.uri));
      return text(`Roots: ${roots.join(', ')}`);
    },
  );
  for (const name of [
    'test_input_required_result_request_state',
    'test_input_required_result_tampered_state',
  ]) {
    server.registerTool(name, { description: name }, async (ctx) => {
      const state = ctx.mcpReq.requestState<{ step: number }>();
      const answer = answerTo(ctx, 'confirm');
      if (state?.step !== 1 || answer === undefined) {
        return inputRequired({
          inputRequests: { confirm: elicit('Please confirm', 'ok', 'boolean') },
          requestState: await codec.mint({ step: 1 }),
        });
      }
      return text(`state-ok: confirmed ${field(answer, 'ok')}`);
    });
  }
  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'test_input_required_result_multiple_inputs' },
    async (ctx) => {
      const name = answerTo(ctx, 'user_name');
      const greeting = answerTo(ctx, 'greeting');
      const roots = answerTo(ctx, 'client_roots');
      if (name === undefined || greeting === undefined || !Array.isArray(roots?.roots)) {
        return inputRequired({
          inputRequests: {
            user_name: elicit('What is your name?', 'name', 'string'),
            greeting: sample('Generate a greeting', 50),
            client_roots: inputRequired.listRoots(),
          },
          requestState: await codec.mint({ step: 1 }),
        });
      }
      return text(
        `${sampled(greeting)}, ${field(name, 'name')} (${(roots.roots as unknown[]).length} roots)`,
      );
    },
  );
  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'test_input_required_result_multi_round' },
    async (ctx) => {
      const state = ctx.mcpReq.requestState<{ step: number; name?: string }>();
      const first = answerTo(ctx, 'step1');
      if (state === undefined && first === undefined) {
        return inputRequired({
          inputRequests: { step1: elicit('Step 1: What is your name?', 'name', 'string') },
          requestState: await codec.mint({ step: 1 }),
        });
      }
      if (state?.step === 1 && first !== undefined) {
        return inputRequired({
          inputRequests: {
            step2: elicit('Step 2: What is your favorite color?', 'color', 'string'),
          },
          requestState: await codec.mint({ step: 2, name: field(first, 'name') }),
        });
      }
      const second = answerTo(ctx, 'step2');
      if (state?.step === 2 && second !== undefined) {
        return text(`${state.name ?? ''} likes ${field(second, 'color')}`);
      }
      return inputRequired({
        inputRequests: { step1: elicit('Step 1: What is your name?', 'name', 'string') },
        requestState: await codec.mint({ step: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'test_input_required_result_capabilities' },
    (ctx) => {
      const capabilities = declared(ctx);
      const wanted: Record<string, ReturnType<typeof elicit>> = {};
      if (capabilities.sampling !== undefined && answerTo(ctx, 'question') === undefined) {
        wanted.question = sample('Hello?', 20);
      }
      if (capabilities.elicitation !== undefined && answerTo(ctx, 'user_name') === undefined) {
        wanted.user_name = elicit('What is your name?', 'name', 'string');
      }
      if (Object.keys(wanted).length > 0) return inputRequired({ inputRequests: wanted });
      return text(`${Object.keys(ctx.mcpReq.inputResponses ?? {}).length} answers`);
    },
  );
  server.registerTool(
    'test_streaming_elicitation',
    { description: 'test_streaming_elicitation' },
    askName,
  );
  server.registerTool('test_logging_tool', { description: 'test_logging_tool' }, async () => {
    await sleep(1);
    return text('logged nothing: no logLevel was asked for');
  });
  // The SDK refuses an inputRequired the client has no capability for (-32021) by itself.
  server.registerTool(
    'test_missing_capability',
    { description: 'test_missing_capability' },
    (ctx) => {
      const answer = answerTo(ctx, 'needs_sampling');
      if (answer === undefined) {
        return inputRequired({ inputRequests: { needs_sampling: sample('Summarize', 20) } });
      }
      return text(sampled(answer));
    },
  );
  server.registerTool(
    'greet',
    { description: 'greet', inputSchema: z.object({ name: z.string() }) },
    ({ name }) => text(`Hello, ${name}!`),
  );
  return server;
}
