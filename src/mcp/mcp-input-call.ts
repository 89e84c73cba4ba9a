import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolChannel, ToolInputRequest, ToolInputResponse } from '../streamtool/index.js';
import { answeredEvent, isAnswerTo, isInputMethod, requestedEvent } from './input-round.js';
import { callToolOn, type McpCallOptions, type McpClient } from './mcp-client.js';
import { McpInputError } from './mcp-input-error.js';

/** A question a called tool asked, with the key its answer goes back under. */
export type McpInputQuestion = ToolInputRequest & { key: string };

/**
 * Answers the questions of MCP tools called through `mcpTools` (MCP 2026-07-28 `input_required`
 * results): an elicitation's `ElicitResult`, a sampling's `CreateMessageResult`, roots'
 * `ListRootsResult`. `signal` aborts with the call.
 */
export type McpInputHandler = (
  question: McpInputQuestion,
  context: { readonly toolName: string; readonly signal: AbortSignal },
) => ToolInputResponse | Promise<ToolInputResponse>;

/** How a called tool's input rounds are answered. */
export interface InputRoundOptions {
  handler: McpInputHandler | undefined;
  maxRounds: number;
}

/** The most questions one `input_required` result may carry; more is refused as a bad peer. */
const MAX_QUESTIONS = 32;
/** The pause before retrying a round that carried only a `requestState` (the server shed load). */
const STATE_ONLY_PAUSE_MS = 250;

interface InputRequired {
  resultType: 'input_required';
  inputRequests?: Record<string, unknown>;
  requestState?: unknown;
}

function isInputRequired(result: unknown): result is InputRequired {
  return (result as { resultType?: unknown } | null)?.resultType === 'input_required';
}

/**
 * One `tools/call` on a 2.x client, its `input_required` rounds taken by tooltrace rather than
 * the SDK (`allowInputRequired`), so each is seen: every question and every answer a progress
 * event of the call (as a served tool's are), the answers from `options.handler`, the call retried
 * with `inputResponses` and the `requestState` echoed, until the tool answers. Without a handler
 * the first question fails the call, naming the option; past `maxRounds`, so does the next round.
 * Resolves with the final result.
 */
export async function callWithInputRounds(
  client: McpClient,
  channel: ToolChannel,
  toolName: string,
  params: Record<string, unknown> & { name: string },
  callOptions: McpCallOptions,
  signal: AbortSignal,
  options: InputRoundOptions,
): Promise<unknown> {
  const requestOptions = { ...callOptions, allowInputRequired: true };
  let result = await callToolOn(client, params, requestOptions);
  let rounds = 0;
  while (isInputRequired(result)) {
    const questions = questionsOf(toolName, result);
    if (questions.length > 0 && options.handler === undefined) {
      const { key, method } = questions[0]!;
      throw new McpInputError(
        'no-handler',
        `MCP tool "${toolName}" asked for input (${method} "${key}") and mcpTools was given no ` +
          'inputHandler: pass mcpTools(client, { inputHandler }) to answer it',
      );
    }
    rounds += 1;
    if (rounds > options.maxRounds) {
      throw new McpInputError(
        'rounds-exceeded',
        `MCP tool "${toolName}" still asked for input after ${options.maxRounds} rounds ` +
          '(mcpTools maxInputRounds)',
      );
    }
    const handler = options.handler!;
    for (const question of questions)
      push(channel, requestedEvent(question.key, question, rounds - 1));
    if (questions.length === 0) await sleep(STATE_ONLY_PAUSE_MS, undefined, { signal });
    const answers = await Promise.all(
      questions.map(async (question): Promise<[string, ToolInputResponse]> => {
        const answer = await handler(question, { toolName, signal });
        if (!isAnswerTo(question.method, answer)) {
          throw new McpInputError(
            'invalid-request',
            `the inputHandler answered ${question.method} "${question.key}" of MCP tool ` +
              `"${toolName}" with something that is not its result`,
          );
        }
        push(channel, answeredEvent(question.key, question.method, answer, rounds));
        return [question.key, answer];
      }),
    );
    signal.throwIfAborted();
    const retry: Record<string, unknown> & { name: string } = { ...params };
    if (answers.length > 0) retry.inputResponses = Object.fromEntries(answers);
    if (result.requestState !== undefined) retry.requestState = result.requestState;
    result = await callToolOn(client, retry, requestOptions);
  }
  return result;
}

/** The questions of an `input_required` result, checked (a peer's: bounded, known kinds). */
function questionsOf(toolName: string, result: InputRequired): McpInputQuestion[] {
  const requests = result.inputRequests ?? {};
  const entries = Object.entries(requests);
  if (entries.length > MAX_QUESTIONS) {
    throw new McpInputError(
      'invalid-request',
      `MCP tool "${toolName}" asked ${entries.length} questions in one round; at most ` +
        `${MAX_QUESTIONS} are taken`,
    );
  }
  if (entries.length === 0 && typeof result.requestState !== 'string') {
    throw new McpInputError(
      'invalid-request',
      `MCP tool "${toolName}" answered input_required with neither inputRequests nor requestState`,
    );
  }
  return entries.map(([key, entry]) => {
    const { method, params } = (entry ?? {}) as { method?: unknown; params?: unknown };
    if (!isInputMethod(method)) {
      throw new McpInputError(
        'invalid-request',
        `MCP tool "${toolName}" asked for input "${key}" of unknown kind ${JSON.stringify(method)}`,
      );
    }
    const question: McpInputQuestion = { key, method };
    if (params !== null && typeof params === 'object' && !Array.isArray(params)) {
      question.params = params as Record<string, unknown>;
    }
    return question;
  });
}

function push(channel: ToolChannel, event: ReturnType<typeof requestedEvent>): void {
  try {
    void channel.progress(-1, event.payload, { attributes: event.attributes! });
  } catch {
    // A full or closed channel drops the round's event; the call goes on.
  }
}
