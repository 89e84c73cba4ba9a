import { setTimeout as sleep } from 'node:timers/promises';
import { ToolStreamError } from '../errors/index.js';
import type { ToolChannel } from '../streamtool/index.js';
import {
  ATTR_MCP_TASK_ID,
  ATTR_MCP_TASK_POLLS,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ERROR_TYPE_TASK_FAILED,
} from './mcp-attribute-names.js';
import { settleCall } from './mcp-call-outcome.js';
import { cancelTask, requestOn, type McpClient, type McpTask } from './mcp-client.js';
import { answerQuestions, questionsOf, type InputRoundOptions } from './mcp-input-call.js';
import {
  failPastDeadline,
  failTask,
  pollDelay,
  StatusTrail,
  TaskBound,
  untilAborted,
  type TaskCallOptions,
} from './mcp-task-call.js';
import type { CreatedTask } from './received-task-results.js';

/**
 * Following a task of MCP 2026-07-28's tasks extension (`io.modelcontextprotocol/tasks`,
 * SEP-2663) that a server made of a `tools/call`, on the 2.x client: `tasks/get` every
 * `pollIntervalMs` (held to the caller's bounds) until the task ends, its result or error inlined
 * in the last answer; the questions a task waits on (`inputRequests` while `input_required`)
 * answered through the same `inputHandler` as `input_required` results, with `tasks/update`; the
 * call's abort sent on as `tasks/cancel`. The call is one span from the task's creation to its end:
 * each new status or status message one progress event, the polls a count on the span.
 */

const STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** What a `tasks/get` (or the `CreateTaskResult`) says, checked. */
interface TaskView extends McpTask {
  pollIntervalMs?: number;
  ttlMs?: number | null;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
  inputRequests?: Record<string, unknown>;
}

/** Reads a peer's task, refusing one without a known status. */
function viewOf(taskId: string, raw: Readonly<Record<string, unknown>>): TaskView {
  const status = raw.status;
  if (typeof status !== 'string' || !STATUSES.has(status)) {
    throw new ToolStreamError(
      `MCP task ${taskId} reported status ${JSON.stringify(status) ?? 'undefined'}; the ` +
        'statuses are working, input_required, completed, failed and cancelled',
    );
  }
  const view: TaskView = { taskId, status };
  if (typeof raw.statusMessage === 'string') view.statusMessage = raw.statusMessage;
  if (typeof raw.pollIntervalMs === 'number') view.pollIntervalMs = raw.pollIntervalMs;
  if (typeof raw.ttlMs === 'number' || raw.ttlMs === null) view.ttlMs = raw.ttlMs;
  view.result = raw.result;
  if (raw.error !== null && typeof raw.error === 'object') view.error = raw.error;
  const requests = raw.inputRequests;
  if (requests !== null && typeof requests === 'object' && !Array.isArray(requests)) {
    view.inputRequests = requests as Record<string, unknown>;
  }
  return view;
}

/**
 * Follows `created` to its end and settles `channel` with it. `rounds` are the input rounds the
 * call took before the task was made (they count towards `maxInputRounds`).
 */
export async function followExtensionTask(
  client: McpClient,
  channel: ToolChannel,
  toolName: string,
  created: CreatedTask,
  signal: AbortSignal,
  options: TaskCallOptions & { input: InputRoundOptions; rounds: number },
): Promise<void> {
  const taskId = created.taskId;
  channel.annotate({ [ATTR_MCP_TASK_ID]: taskId });
  const cancelOnAbort = (): void => cancelTask(client, taskId);
  signal.addEventListener('abort', cancelOnAbort, { once: true });
  let task = viewOf(taskId, created.raw);
  const bound = new TaskBound(signal, options.deadline, task.ttlMs);
  const polling = bound.polling;
  let polls = 0;
  let rounds = options.rounds;
  const answered = new Set<string>();
  const seen = new StatusTrail(channel);
  const get = async (): Promise<TaskView> => {
    polls += 1;
    const raw = await untilAborted(polling, (stage) =>
      requestOn(client, 'tasks/get', { taskId }, { signal: stage }),
    );
    return viewOf(taskId, raw);
  };
  try {
    for (;;) {
      seen.record(task);
      // A CreateTaskResult names a task that ended at once but inlines nothing: ask for it.
      if (task.status === 'completed' && task.result === undefined && polls === 0) {
        task = await get();
        continue;
      }
      if (TERMINAL.has(task.status)) break;
      if (task.status === 'input_required' && task.inputRequests !== undefined) {
        // Keys answered already are not answered twice (a server may list them until it reads
        // the update); the others are this round's questions.
        const questions = questionsOf(toolName, { inputRequests: task.inputRequests }).filter(
          (question) => !answered.has(question.key),
        );
        if (questions.length > 0) {
          rounds += 1;
          const answers = await answerQuestions(
            channel,
            toolName,
            questions,
            options.input,
            rounds,
            polling,
          );
          for (const key of Object.keys(answers)) answered.add(key);
          await untilAborted(polling, (stage) =>
            requestOn(
              client,
              'tasks/update',
              { taskId, inputResponses: answers },
              { signal: stage },
            ),
          );
          task = await get();
          continue;
        }
      }
      await sleep(
        pollDelay(task.pollIntervalMs, options.pollInterval, options.minPollInterval),
        undefined,
        { signal: polling },
      );
      task = await get();
    }
  } catch (error) {
    if (!signal.aborted) cancelTask(client, taskId);
    if (signal.aborted || !bound.expired) throw error;
    // Past the deadline: the server was told, and the call ends as a failure of its own kind.
    const named = bound.byTtl ? "the task's ttlMs" : 'taskDeadline';
    return failPastDeadline(channel, taskId, task.status, bound.ms, named, polls);
  } finally {
    bound.dispose();
    signal.removeEventListener('abort', cancelOnAbort);
    if (!channel.closed) channel.annotate({ [ATTR_MCP_TASK_POLLS]: polls });
  }
  return settleTask(channel, toolName, task);
}

/** Ends the call as the task ended: its inlined result, its error, or its cancellation. */
function settleTask(channel: ToolChannel, toolName: string, task: TaskView): Promise<void> {
  if (task.status === 'completed') {
    if (task.result === null || typeof task.result !== 'object') {
      return channel.fail(
        new ToolStreamError(`MCP task ${task.taskId} completed without a result object`),
        { errorType: ERROR_TYPE_TASK_FAILED },
      );
    }
    return settleCall(channel, toolName, task.result);
  }
  if (task.status === 'cancelled') return failTask(channel, task);
  const message = typeof task.error?.message === 'string' ? task.error.message : undefined;
  const code = task.error?.code;
  return failTask(
    channel,
    task,
    message ?? task.statusMessage,
    typeof code === 'number' && Number.isSafeInteger(code)
      ? { [ATTR_RPC_RESPONSE_STATUS_CODE]: String(code) }
      : {},
  );
}
