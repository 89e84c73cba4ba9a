import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolChannel, ToolInputRequest, ToolInputResponse } from '../streamtool/index.js';
import { answeredEvent, isAnswerTo, isInputMethod, requestedEvent } from './input-round.js';
import { callToolOn, cancelTask, type McpCallOptions, type McpClient } from './mcp-client.js';
import { watchCreatedTasks, type CreatedTask, type TaskWatch } from './received-task-results.js';
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
  /**
   * Called before each request that carries the call again (with answers or a state): the request
   * has a progress token of its own, so the server counts its progress from 1 again.
   */
  newRequest?: () => void;
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

/** How a 2.x call ended: the tool's result, or the task the server made of it (2026-07-28). */
export type ModernCallOutcome =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'task'; readonly task: CreatedTask; readonly rounds: number };

/** How long a call aborted mid-request still listens for a task to cancel (stdio answers late). */
const LATE_TASK_WATCH_MS = 60_000;

/**
 * One `tools/call` on a 2.x client, its `input_required` rounds taken by tooltrace rather than
 * the SDK (`allowInputRequired`), so each is seen: every question and every answer a progress
 * event of the call (as a served tool's are), the answers from `options.handler`, the call retried
 * with `inputResponses` and the `requestState` echoed, until the tool answers — with its result,
 * or with a `CreateTaskResult` (MCP 2026-07-28 tasks extension: the server made a task of the
 * call, which the 2.x client itself refuses; it is read on the transport). Without a handler the
 * first question fails the call, naming the option; past `maxRounds`, so does the next round. A
 * call aborted while its request is out cancels a task the server still answers with.
 */
export async function callWithInputRounds(
  client: McpClient,
  channel: ToolChannel,
  toolName: string,
  params: Record<string, unknown> & { name: string; arguments: Record<string, unknown> },
  callOptions: McpCallOptions,
  signal: AbortSignal,
  options: InputRoundOptions,
): Promise<ModernCallOutcome> {
  const requestOptions = { ...callOptions, allowInputRequired: true };
  const watch = watchCreatedTasks(client.transport, params.arguments);
  let outcome: ModernCallOutcome | undefined;
  const call = async (request: Record<string, unknown> & { name: string }): Promise<unknown> => {
    try {
      return await callToolOn(client, request, requestOptions);
    } catch (error) {
      const created = watch?.created;
      if (created !== undefined && isUnsupportedTask(error)) return created;
      throw error;
    }
  };
  try {
    let result = await call(params);
    let rounds = 0;
    while (isInputRequired(result)) {
      const questions = questionsOf(toolName, result);
      rounds += 1;
      if (questions.length === 0) await sleep(STATE_ONLY_PAUSE_MS, undefined, { signal });
      const answers = await answerQuestions(channel, toolName, questions, options, rounds, signal);
      const retry: Record<string, unknown> & { name: string } = { ...params };
      if (questions.length > 0) retry.inputResponses = answers;
      if (result.requestState !== undefined) retry.requestState = result.requestState;
      options.newRequest?.();
      result = await call(retry);
    }
    outcome =
      result === watch?.created && watch?.created !== undefined
        ? { kind: 'task', task: watch.created, rounds }
        : { kind: 'result', result };
    return outcome;
  } finally {
    if (watch !== undefined) stopWatching(client, watch, outcome, signal);
  }
}

/** Stops a call's task watch, or — aborted with a request out — keeps it to cancel a late task. */
function stopWatching(
  client: McpClient,
  watch: TaskWatch,
  outcome: ModernCallOutcome | undefined,
  signal: AbortSignal,
): void {
  if (outcome !== undefined || !signal.aborted || watch.created !== undefined) {
    watch.stop();
    return;
  }
  const timer = setTimeout(() => watch.stop(), LATE_TASK_WATCH_MS);
  timer.unref();
  watch.onCreated = (task) => {
    clearTimeout(timer);
    watch.stop();
    cancelTask(client, task.taskId);
  };
}

/**
 * Answers one round of questions through the handler: each question a `requested` event, each
 * answer an answered event (rounds counted from 1). Without a handler the first question fails
 * the call naming the option; past `maxRounds` the round does. Resolves with the answers by key.
 */
export async function answerQuestions(
  channel: ToolChannel,
  toolName: string,
  questions: readonly McpInputQuestion[],
  options: InputRoundOptions,
  rounds: number,
  signal: AbortSignal,
): Promise<Record<string, ToolInputResponse>> {
  if (questions.length > 0 && options.handler === undefined) {
    const { key, method } = questions[0]!;
    throw new McpInputError(
      'no-handler',
      `MCP tool "${toolName}" asked for input (${method} "${key}") and mcpTools was given no ` +
        'inputHandler: pass mcpTools(client, { inputHandler }) to answer it',
    );
  }
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
  return Object.fromEntries(answers);
}

/** Whether a 2.x client refused a result because it named a task (`resultType: "task"`). */
function isUnsupportedTask(error: unknown): boolean {
  const { code, data } = (error ?? {}) as { code?: unknown; data?: { resultType?: unknown } };
  return code === 'UNSUPPORTED_RESULT_TYPE' && data?.resultType === 'task';
}

/** The questions of an `input_required` result, checked (a peer's: bounded, known kinds). */
export function questionsOf(
  toolName: string,
  result: Pick<InputRequired, 'inputRequests' | 'requestState'>,
): McpInputQuestion[] {
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
