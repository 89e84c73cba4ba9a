import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolChannel } from '../streamtool/index.js';
import { ToolStreamError } from '../errors/index.js';
import {
  ATTR_MCP_TASK_ID,
  ATTR_MCP_TASK_INPUT_REQUIRED,
  ATTR_MCP_TASK_STATUS,
  ATTR_MCP_TASK_POLLS,
  ERROR_TYPE_TASK_CANCELLED,
  ERROR_TYPE_TASK_DEADLINE,
  ERROR_TYPE_TASK_FAILED,
} from './mcp-attribute-names.js';
import { settleCall } from './mcp-call-outcome.js';
import { boundedMessage } from './progress-relay.js';
import type { McpCallOptions, McpTask, McpTaskApi } from './mcp-client.js';

/** How a task call polls. */
export interface TaskCallOptions {
  /** `task.ttl` of the request, when given. */
  ttl?: number;
  /** The wait between polls when the server gives no `pollInterval`. */
  pollInterval: number;
  /** The shortest wait between polls whatever the server asks for. */
  minPollInterval: number;
  /** How long the call may poll at most, from the task's creation. */
  deadline: number;
}

/** The longest wait between polls, whatever the server asks for. */
export const MAX_POLL_INTERVAL = 30_000;
/**
 * An unchanged status is repeated as a progress event this often while the call polls, so a
 * tracer's idle timeout (5 minutes by default) never abandons a call that is still polled.
 */
export const TASK_HEARTBEAT_MS = 30_000;

/**
 * The wait before the next poll: what the server asks for, within `minimum` to 30 s (a server
 * that says 0, a negative number, NaN or 1e12, which Node would run as 1 ms, is held to the
 * range), or `fallback` when it asks for nothing.
 */
export function pollDelay(asked: unknown, fallback: number, minimum: number): number {
  const wanted = typeof asked === 'number' && !Number.isNaN(asked) ? asked : fallback;
  return Math.min(MAX_POLL_INTERVAL, Math.max(minimum, wanted));
}

interface LegacyRequester {
  request(request: unknown, resultSchema: unknown, options?: unknown): Promise<unknown>;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * One tool call run as an MCP task (2025-11-25, the 1.x SDK's `experimental.tasks`): a
 * task-augmented `tools/call`, then `tasks/get` every `pollInterval` the server asks for, then
 * `tasks/result`. Each new status or status message is a progress event on `channel` (the
 * payload `{ status, statusMessage }`, the status also as the event's `tooltrace.mcp.task.status`),
 * the task id and last status span attributes however the call ends. `input_required` fetches `tasks/result` at once, which delivers the server's
 * requests (elicitation, sampling) and waits for the end. Aborting `signal` sends `tasks/cancel`,
 * also when it comes while the task is being created (once the server names it).
 */
export async function runTaskCall(
  api: McpTaskApi & { client: LegacyRequester },
  channel: ToolChannel,
  toolName: string,
  params: Record<string, unknown>,
  callOptions: McpCallOptions,
  signal: AbortSignal,
  options: TaskCallOptions,
): Promise<void> {
  // Tasks exist on the 1.x line only, so its schemas are there whenever a task runs.
  const { CallToolResultSchema, CreateTaskResultSchema } =
    await import('@modelcontextprotocol/sdk/types.js');
  // The call's signal is watched here, stage by stage, rather than left on the SDK's requests.
  const requestOptions: McpCallOptions = { ...callOptions };
  delete requestOptions.signal;
  const cancel = (taskId: string): void => {
    // The server's task ends `cancelled`; a server that already finished it refuses, which is fine.
    api.cancelTask(taskId).catch(() => {});
  };
  signal.throwIfAborted();
  // The creating request is not cancelled with the call: a notifications/cancelled would leave the
  // server's task running, and the SDK would drop the response that names it.
  const creating = api.client.request({ method: 'tools/call', params }, CreateTaskResultSchema, {
    ...requestOptions,
    task: options.ttl === undefined ? {} : { ttl: options.ttl },
  }) as Promise<{ task: McpTask }>;
  const created = await createdUnlessAborted(signal, creating, cancel);
  let task = created.task;
  const taskId = task.taskId;
  channel.annotate({ [ATTR_MCP_TASK_ID]: taskId });
  const cancelOnAbort = (): void => cancel(taskId);
  signal.addEventListener('abort', cancelOnAbort, { once: true });
  const bound = new TaskBound(signal, options.deadline, task.ttl);
  const polling = bound.polling;
  let polls = 0;
  const seen = new StatusTrail(channel);
  const follow = async (): Promise<void> => {
    for (;;) {
      seen.record(task);
      if (TERMINAL.has(task.status) || task.status === 'input_required') break;
      await sleep(
        pollDelay(task.pollInterval, options.pollInterval, options.minPollInterval),
        undefined,
        { signal: polling },
      );
      polls += 1;
      task = await untilAborted(polling, (stageSignal) =>
        api.getTask(taskId, { signal: stageSignal }),
      );
    }
    channel.annotate({ [ATTR_MCP_TASK_POLLS]: polls });
    if (task.status === 'cancelled') return failTask(channel, task);
    let result: unknown;
    try {
      // For completed and input_required tasks the result; for a failed one what it failed with.
      result = await untilAborted(polling, (stageSignal) =>
        api.getTaskResult(taskId, CallToolResultSchema, { signal: stageSignal }),
      );
    } catch (error) {
      if (task.status !== 'failed' || polling.aborted) throw error;
    }
    if (
      task.status === 'failed' &&
      (result as { isError?: unknown } | undefined)?.isError !== true
    ) {
      return failTask(channel, task);
    }
    if (task.status === 'input_required') {
      // tasks/result waited for the end; read the status it ended with.
      seen.record(await api.getTask(taskId).catch(() => ({ ...task, status: 'completed' })));
    }
    return settleCall(channel, toolName, result);
  };
  try {
    await follow();
  } catch (error) {
    if (signal.aborted || !bound.expired) throw error;
    // Past the deadline: the server is told, and the call ends as a failure of its own kind.
    cancel(taskId);
    const named = bound.byTtl ? "the task's ttl" : 'taskDeadline';
    await failPastDeadline(channel, taskId, task.status, bound.ms, named, polls);
  } finally {
    bound.dispose();
    signal.removeEventListener('abort', cancelOnAbort);
  }
}

/**
 * Waits for the task's creation. An abort meanwhile ends the wait at once (the call ends
 * cancelled) and leaves the request running: once its answer names the task, the task is
 * cancelled with `tasks/cancel`.
 */
async function createdUnlessAborted(
  signal: AbortSignal,
  creating: Promise<{ task: McpTask }>,
  cancel: (taskId: string) => void,
): Promise<{ task: McpTask }> {
  let stopWaiting = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    stopWaiting = () => reject(signal.reason as Error);
    signal.addEventListener('abort', stopWaiting, { once: true });
  });
  try {
    return await Promise.race([creating, aborted]);
  } catch (error) {
    if (signal.aborted)
      creating.then(
        ({ task }) => cancel(task.taskId),
        () => {},
      );
    throw error;
  } finally {
    signal.removeEventListener('abort', stopWaiting);
  }
}

/**
 * Runs one request with a signal of its own that aborts with `signal`, so a request that
 * finished keeps no listener on the call's signal (the 1.x SDK never removes its own).
 */
export async function untilAborted<T>(
  signal: AbortSignal,
  request: (stageSignal: AbortSignal) => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  const stage = new AbortController();
  const relay = (): void => stage.abort(signal.reason);
  signal.addEventListener('abort', relay, { once: true });
  try {
    return await request(stage.signal);
  } finally {
    signal.removeEventListener('abort', relay);
  }
}

/**
 * The task's statuses as the call saw them: each new status or status message a progress event
 * (and an unchanged one again every 30 s while polled, so the call never looks idle)
 * carrying the status as `tooltrace.mcp.task.status` (the message is content: it is in the
 * payload, recorded under the capture rules), and the span's.
 */
export class StatusTrail {
  readonly #channel: ToolChannel;
  #last = '';
  #lastAt = 0;

  constructor(channel: ToolChannel) {
    this.#channel = channel;
  }

  record(task: McpTask): void {
    const key = `${task.status}\u0000${task.statusMessage ?? ''}`;
    const now = performance.now();
    if (this.#channel.closed) return;
    if (key === this.#last && now - this.#lastAt < TASK_HEARTBEAT_MS) return;
    this.#last = key;
    this.#lastAt = now;
    const annotations: Record<string, string | boolean> = { [ATTR_MCP_TASK_STATUS]: task.status };
    if (task.status === 'input_required') annotations[ATTR_MCP_TASK_INPUT_REQUIRED] = true;
    this.#channel.annotate(annotations);
    // Every status is an event, terminal ones included: the status is on each event whatever the
    // content capture, and the last event's is the span's (event attributes win over annotations).
    const payload: { status: string; statusMessage?: string } = { status: task.status };
    if (task.statusMessage !== undefined)
      payload.statusMessage = boundedMessage(task.statusMessage);
    try {
      void this.#channel.progress(-1, payload, {
        attributes: { [ATTR_MCP_TASK_STATUS]: task.status },
      });
    } catch {
      // A full channel drops the status event; the status is still on the span.
    }
  }
}

/**
 * Ends a call whose task the server ended `cancelled` or `failed`, in its words (`message`, by
 * default the status message) when it gave any.
 */
export function failTask(
  channel: ToolChannel,
  task: McpTask,
  message = task.statusMessage,
  attributes: Record<string, string> = {},
): Promise<void> {
  const cancelled = task.status === 'cancelled';
  const fallback = `MCP task ${task.taskId} ${cancelled ? 'was cancelled by the server' : 'failed'}`;
  return channel.fail(new ToolStreamError(boundedMessage(message) ?? fallback), {
    errorType: cancelled ? ERROR_TYPE_TASK_CANCELLED : ERROR_TYPE_TASK_FAILED,
    attributes,
  });
}

/**
 * Ends a task call whose task outlived its deadline (the server has been told to cancel it) as
 * a failure of its own kind, naming the `bound` that ran out: the task's ttl (spelled as its
 * protocol version spells the field) or `taskDeadline`.
 */
export function failPastDeadline(
  channel: ToolChannel,
  taskId: string,
  status: string,
  deadlineMs: number,
  bound: string,
  polls: number,
): Promise<void> {
  return channel.fail(
    new ToolStreamError(
      `MCP task ${taskId} was still "${status}" after ${deadlineMs} ms ` +
        `(${bound}); it was cancelled`,
    ),
    { errorType: ERROR_TYPE_TASK_DEADLINE, attributes: { [ATTR_MCP_TASK_POLLS]: polls } },
  );
}

/**
 * How long a task is followed: the call's own deadline, or the task's ttl when shorter (past it
 * the server may have dropped the task, and a task kept `working` forever must not be polled
 * forever). `polling` aborts with the call or at the bound; `dispose` clears the timer.
 */
export class TaskBound {
  /** The bound in milliseconds. */
  readonly ms: number;
  /** Whether the task's ttl set the bound (not the call's deadline). */
  readonly byTtl: boolean;
  readonly polling: AbortSignal;
  readonly #expiry = new AbortController();
  readonly #timer: NodeJS.Timeout;

  constructor(signal: AbortSignal, deadline: number, ttl: unknown) {
    const ttlMs = typeof ttl === 'number' && ttl >= 0 ? ttl : Number.POSITIVE_INFINITY;
    this.ms = Math.min(deadline, ttlMs);
    this.byTtl = this.ms === ttlMs;
    this.#timer = setTimeout(() => this.#expiry.abort(), Math.min(this.ms, 2 ** 31 - 1));
    this.#timer.unref();
    this.polling = AbortSignal.any([signal, this.#expiry.signal]);
  }

  /** Whether the bound has passed. */
  get expired(): boolean {
    return this.#expiry.signal.aborted;
  }

  dispose(): void {
    clearTimeout(this.#timer);
  }
}
