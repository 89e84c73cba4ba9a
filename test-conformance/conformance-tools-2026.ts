import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { McpServedTool } from '../src/mcp/index.js';
import type {
  ChannelTool,
  ToolContext,
  ToolEvent,
  ToolInputRequest,
  ToolInputResponse,
} from '../src/streamtool/index.js';

/**
 * The tools the conformance suite's MCP 2026-07-28 scenarios call (SEP-2322 `input_required`,
 * SEP-2575 stateless), written as tooltrace tools that ask for input mid-stream through
 * `ToolContext.requestInput`: `serveMcpTools` turns each question into an `input_required` round
 * trip. Each reports what it is doing as progress before it asks.
 */

function ask(
  context: ToolContext | undefined,
  request: ToolInputRequest,
): Promise<ToolInputResponse> {
  if (context?.requestInput === undefined) throw new Error('this caller cannot be asked for input');
  return context.requestInput(request);
}

function elicit(key: string, message: string, property: string, type: string): ToolInputRequest {
  return {
    key,
    method: 'elicitation/create',
    params: {
      message,
      requestedSchema: {
        type: 'object',
        properties: { [property]: { type } },
        required: [property],
      },
    },
  };
}

function sample(key: string, text: string, maxTokens: number): ToolInputRequest {
  return {
    key,
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens },
  };
}

const ROOTS: ToolInputRequest = { key: 'client_roots', method: 'roots/list', params: {} };

function text(value: string): { content: { type: 'text'; text: string }[] } {
  return { content: [{ type: 'text', text: value }] };
}

/** What an elicitation answered for `property`, or the action when it was not accepted. */
function field(response: ToolInputResponse, property: string): string {
  const content = response.content as Record<string, unknown> | undefined;
  return response.action === 'accept' ? String(content?.[property]) : String(response.action);
}

function sampled(response: ToolInputResponse): string {
  const content = response.content as { text?: unknown } | undefined;
  return typeof content?.text === 'string' ? content.text : JSON.stringify(response.content);
}

/** A tool whose stream is one progress note, then what `run` answers. */
function asking(
  name: string,
  run: (context: ToolContext | undefined) => Promise<unknown>,
): ChannelTool {
  return {
    name,
    async *stream(_signal, _input, context): AsyncGenerator<ToolEvent> {
      yield { kind: 'progress', progress: 0, payload: 'asking' };
      yield { kind: 'complete', payload: await run(context) };
    },
  };
}

export const conformanceTools2026: readonly McpServedTool[] = [
  {
    tool: asking('test_input_required_result_elicitation', async (context) => {
      const answer = await ask(
        context,
        elicit('user_name', 'What is your name?', 'name', 'string'),
      );
      return text(`Hello, ${field(answer, 'name')}!`);
    }),
    description: 'Asks the user for a name',
  },
  {
    tool: asking('test_input_required_result_sampling', async (context) => {
      const answer = await ask(
        context,
        sample('capital_question', 'What is the capital of France?', 100),
      );
      return text(`The model said: ${sampled(answer)}`);
    }),
    description: "Asks the client's model a question",
  },
  {
    tool: asking('test_input_required_result_list_roots', async (context) => {
      const answer = await ask(context, ROOTS);
      const roots = (answer.roots as { uri?: unknown }[]).map((root) => String(root.uri));
      return text(`Roots: ${roots.join(', ')}`);
    }),
    description: "Asks for the client's roots",
  },
  {
    tool: asking('test_input_required_result_request_state', async (context) => {
      const answer = await ask(context, elicit('confirm', 'Please confirm', 'ok', 'boolean'));
      // The call resumed from the sealed requestState: the same run, which asked once.
      return text(`state-ok: confirmed ${field(answer, 'ok')}`);
    }),
    description: 'Asks for a confirmation, resuming from its requestState',
  },
  {
    tool: asking('test_input_required_result_multiple_inputs', async (context) => {
      const [name, greeting, roots] = await Promise.all([
        ask(context, elicit('user_name', 'What is your name?', 'name', 'string')),
        ask(context, sample('greeting', 'Generate a greeting', 50)),
        ask(context, ROOTS),
      ]);
      return text(
        `${sampled(greeting)}, ${field(name, 'name')} (${(roots.roots as unknown[]).length} roots)`,
      );
    }),
    description: 'Asks three questions at once',
  },
  {
    tool: asking('test_input_required_result_multi_round', async (context) => {
      const name = await ask(
        context,
        elicit('step1', 'Step 1: What is your name?', 'name', 'string'),
      );
      const color = await ask(
        context,
        elicit('step2', 'Step 2: What is your favorite color?', 'color', 'string'),
      );
      return text(`${field(name, 'name')} likes ${field(color, 'color')}`);
    }),
    description: 'Asks two questions, one after the other',
  },
  {
    tool: asking('test_input_required_result_tampered_state', async (context) => {
      const answer = await ask(context, elicit('confirm', 'Please confirm', 'ok', 'boolean'));
      return text(`confirmed ${field(answer, 'ok')}`);
    }),
    description: 'Asks for a confirmation; its requestState is sealed',
  },
  {
    tool: asking('test_input_required_result_capabilities', async (context) => {
      // Ask only for what the client declared.
      const declared = context?.clientCapabilities ?? {};
      const questions: Promise<ToolInputResponse>[] = [];
      if (declared.sampling !== undefined)
        questions.push(ask(context, sample('question', 'Hello?', 20)));
      if (declared.elicitation !== undefined) {
        questions.push(ask(context, elicit('user_name', 'What is your name?', 'name', 'string')));
      }
      const answers = await Promise.all(questions);
      return text(`${answers.length} answers`);
    }),
    description: 'Asks only for what the client declared',
  },
  {
    tool: asking('test_streaming_elicitation', async (context) => {
      const answer = await ask(
        context,
        elicit('user_name', 'What is your name?', 'name', 'string'),
      );
      return text(`Hello, ${field(answer, 'name')}!`);
    }),
    description: 'Streams progress, then asks the user (in its result, never as a request)',
  },
  {
    tool: {
      name: 'test_logging_tool',
      async *stream(): AsyncGenerator<ToolEvent> {
        yield { kind: 'progress', progress: 0.5, payload: 'half way' };
        await Promise.resolve();
        yield { kind: 'complete', payload: text('logged nothing: no logLevel was asked for') };
      },
    },
    description: 'Streams progress; sends no log messages',
  },
  {
    tool: asking('test_missing_capability', async (context) => {
      const answer = await ask(context, sample('needs_sampling', 'Summarize', 20));
      return text(sampled(answer));
    }),
    description: 'Needs sampling: refused (-32021) for a client without it',
  },
  // The tasks extension's fixtures (io.modelcontextprotocol/tasks, SEP-2663).
  {
    tool: {
      name: 'greet',
      async *stream(_signal, input): AsyncGenerator<ToolEvent> {
        await Promise.resolve();
        yield { kind: 'complete', payload: text(`Hello, ${String(input.name)}!`) };
      },
    },
    description: 'Greets, at once (never a task)',
    inputSchema: { name: z.string() },
  },
  {
    tool: {
      name: 'slow_compute',
      async *stream(signal, input): AsyncGenerator<ToolEvent> {
        const seconds = Number(input.seconds ?? 0);
        for (let second = 0; second < seconds; second += 1) {
          yield { kind: 'progress', progress: second / seconds, payload: `second ${second + 1}` };
          await sleep(1000, undefined, { signal });
        }
        yield {
          kind: 'complete',
          payload: text(`computed ${typeof input.label === 'string' ? input.label : ''}`),
        };
      },
    },
    description: 'Sleeps the given seconds, then answers',
    inputSchema: { seconds: z.number(), label: z.string().optional() },
    execution: { taskSupport: 'optional' },
  },
  {
    tool: {
      name: 'failing_job',
      async *stream(signal): AsyncGenerator<ToolEvent> {
        yield { kind: 'progress', progress: 0, payload: 'failing soon' };
        await sleep(1000, undefined, { signal });
        throw new Error('failing_job always fails');
      },
    },
    description: 'Fails after about a second; only as a task',
    execution: { taskSupport: 'required' },
  },
  {
    tool: {
      name: 'test_tool_with_task',
      async *stream(_signal, _input, context): AsyncGenerator<ToolEvent> {
        // Asked as its first act: an input_required round of tools/call, then a task.
        const answer = await ask(
          context,
          elicit('user_name', 'What is your name?', 'name', 'string'),
        );
        yield { kind: 'progress', progress: 0.5, payload: 'greeting' };
        yield { kind: 'complete', payload: text(`Hello, ${field(answer, 'name')}! (a task)`) };
      },
    },
    description: 'Only as a task; asks for a name first',
    execution: { taskSupport: 'required' },
  },
  {
    tool: {
      name: 'protocol_error_job',
      async *stream(signal): AsyncGenerator<ToolEvent> {
        yield { kind: 'progress', progress: 0, payload: 'about to fail' };
        await sleep(1000, undefined, { signal });
        // An error with a JSON-RPC code: a protocol error, which fails the task.
        throw Object.assign(new Error('protocol_error_job hit an internal error'), {
          code: -32603,
        });
      },
    },
    description: 'Fails after about a second',
    execution: { taskSupport: 'optional' },
  },
  {
    tool: asking('confirm_delete', async (context) => {
      const answer = await ask(
        context,
        elicit('confirm', 'Delete the files?', 'confirmed', 'boolean'),
      );
      return text(`confirm_delete: ${String(answer.action)}`);
    }),
    description: 'Asks for a confirmation',
    execution: { taskSupport: 'optional' },
  },
  {
    tool: asking('multi_input', async (context) => {
      const [first, second] = await Promise.all([
        ask(context, elicit('first', 'First?', 'value', 'string')),
        ask(context, elicit('second', 'Second?', 'value', 'string')),
      ]);
      return text(`multi_input: ${field(first, 'value')}, ${field(second, 'value')}`);
    }),
    description: 'Asks two questions at once',
    execution: { taskSupport: 'optional' },
  },
];
