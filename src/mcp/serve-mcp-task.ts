import type {
  RequestHandlerExtra,
  RequestTaskStore,
} from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { ToolCancelledError } from '../errors/index.js';
import { toolOutput } from '../streamtool/tool-output.js';
import type { McpRegisteredTool, McpToolServer } from './mcp-tool-server.js';
import { ProgressNotifier } from './progress-notifier.js';
import { servedRequestOf } from './served-request.js';
import type { McpServedTool, ServedCall, StreamListener } from './served-tool.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type TaskExtra = Extra & { taskStore: RequestTaskStore };

/** How often a running served task looks whether a client cancelled it (`tasks/cancel`). */
const CANCEL_CHECK_MS = 100;

/** What a served task asks of clients. */
export interface ServedTaskOptions {
  pollInterval: number;
  ttl: number;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

interface TaskRegistrar {
  registerToolTask(
    name: string,
    config: Record<string, unknown>,
    handler: unknown,
  ): McpRegisteredTool;
}

/**
 * Registers `served` with the 1.x SDK's `server.experimental.tasks.registerToolTask`: a
 * task-augmented `tools/call` creates the task in the server's `taskStore` and returns it at
 * once, the tool runs in the background (its span continues the creating request's `_meta`), its
 * progress and partials become the task's status messages, its result the task's, and a
 * `tasks/cancel` (the task turned `cancelled` in the store) aborts it.
 */
export function registerTaskTool(
  server: McpToolServer,
  served: McpServedTool,
  config: Record<string, unknown>,
  start: (input: Record<string, unknown>, extra: Extra, signal: AbortSignal) => ServedCall,
  options: ServedTaskOptions,
): McpRegisteredTool {
  const tasks = (server as unknown as { experimental?: { tasks?: TaskRegistrar } }).experimental
    ?.tasks;
  if (typeof tasks?.registerToolTask !== 'function') {
    throw new TypeError(
      `tool "${served.tool.name}" has execution.taskSupport, and this McpServer has no ` +
        'experimental.tasks.registerToolTask (tasks need @modelcontextprotocol/sdk 1.x)',
    );
  }
  const capabilities = (
    server.server as unknown as { getCapabilities?: () => unknown }
  ).getCapabilities?.() as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined;
  if (capabilities !== undefined && capabilities.tasks?.requests?.tools?.call === undefined) {
    // Clients would refuse every call of it (it is listed as a task tool, the server has no tasks).
    throw new TypeError(
      `tool "${served.tool.name}" has execution.taskSupport, and the McpServer has no tasks ` +
        'capability for tools/call: create it with { capabilities: { tasks: { requests: ' +
        '{ tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() }',
    );
  }
  if (hasNoTaskStore(server)) {
    // The SDK would answer every task-augmented call with -32602 "Invalid task creation result".
    throw new TypeError(
      `tool "${served.tool.name}" has execution.taskSupport, and the McpServer has no taskStore: ` +
        "create it with { taskStore: new InMemoryTaskStore() } (from '@modelcontextprotocol/sdk/" +
        "experimental/tasks') beside its tasks capability",
    );
  }
  const createTask = async (input: Record<string, unknown>, extra: TaskExtra) => {
    const task = await extra.taskStore.createTask({
      ttl: options.ttl,
      pollInterval: options.pollInterval,
    });
    runTask(task.taskId, input, extra, start, (extra as MarkedExtra)[PLAIN_CALL] === true);
    return { task };
  };
  const handler = {
    createTask:
      served.inputSchema === undefined
        ? (extra: TaskExtra) => createTask({}, extra)
        : (input: Record<string, unknown>, extra: TaskExtra) => createTask(input, extra),
    getTask: (_input: unknown, extra: TaskExtra & { taskId: string }) =>
      extra.taskStore.getTask(extra.taskId),
    getTaskResult: (_input: unknown, extra: TaskExtra & { taskId: string }) =>
      extra.taskStore.getTaskResult(extra.taskId),
  };
  const registered = tasks.registerToolTask(
    served.tool.name,
    { ...config, execution: served.execution },
    handler,
  );
  markPlainCalls(server);
  return registered;
}

/** Set on a handler context whose `tools/call` was not task-augmented. */
const PLAIN_CALL = Symbol('tooltrace.mcp.plainCall');
type MarkedExtra = TaskExtra & { [PLAIN_CALL]?: boolean };
type RequestHandler = (request: { params?: { task?: unknown } }, extra: object) => unknown;
const marked = new WeakSet<object>();

/**
 * Marks the handler context of each plain `tools/call` the server receives. The 1.x SDK runs a
 * plain call of an `optional` task tool through the tool's `createTask` and polls the task to
 * answer it, with nothing in the context to tell it from a task-augmented call; only a plain call
 * should send its stream as `notifications/progress` (a task's goes into its status messages).
 * The SDK keeps its handlers in a private map: a line that keeps them elsewhere is left unmarked,
 * and its plain calls of task tools get no progress (as before).
 */
function markPlainCalls(server: McpToolServer): void {
  const protocol = server.server as unknown as { _requestHandlers?: unknown };
  const handlers = protocol._requestHandlers;
  if (!(handlers instanceof Map) || marked.has(protocol)) return;
  const handle = handlers.get('tools/call') as RequestHandler | undefined;
  if (typeof handle !== 'function') return;
  marked.add(protocol);
  handlers.set('tools/call', (request: { params?: { task?: unknown } }, extra: object) => {
    if (request?.params?.task === undefined) (extra as MarkedExtra)[PLAIN_CALL] = true;
    return handle(request, extra);
  });
}

/**
 * Whether the server was created without a `taskStore`. The 1.x SDK keeps it in a private field
 * that its constructor always sets; a line that keeps it elsewhere is not judged (the check is
 * skipped rather than refusing a server that has one).
 */
function hasNoTaskStore(server: McpToolServer): boolean {
  const protocol = server.server as unknown as Record<string, unknown>;
  return '_taskStore' in protocol && protocol._taskStore === undefined;
}

/** Runs the task's call in the background, keeping the store up to date. */
function runTask(
  taskId: string,
  input: Record<string, unknown>,
  extra: TaskExtra,
  start: (input: Record<string, unknown>, extra: Extra, signal: AbortSignal) => ServedCall,
  plainCall: boolean,
): void {
  const store = extra.taskStore;
  const controller = new AbortController();
  const call = start(input, extra, controller.signal);
  const status = new TaskStatusListener(store, taskId, controller);
  call.relay.listen(status);
  // A plain call's client waits on its request, and hears the stream as progress like any call's.
  if (plainCall) call.relay.listen(new ProgressNotifier(servedRequestOf(extra)));
  const watch = setInterval(() => status.checkCancelled(), CANCEL_CHECK_MS);
  watch.unref();
  void call.result
    .then(async (result) => {
      if (controller.signal.aborted) return;
      await store.storeTaskResult(taskId, result.isError === true ? 'failed' : 'completed', result);
    })
    .catch(() => {
      // The task ended elsewhere (cancelled, expired): its store refuses the result.
    })
    .finally(() => clearInterval(watch));
}

/** A served task's stream as its status messages (`working`, the progress note or partial). */
class TaskStatusListener implements StreamListener {
  readonly #store: RequestTaskStore;
  readonly #taskId: string;
  readonly #controller: AbortController;

  constructor(store: RequestTaskStore, taskId: string, controller: AbortController) {
    this.#store = store;
    this.#taskId = taskId;
    this.#controller = controller;
  }

  progress(fraction: number, payload: unknown): Promise<void> {
    const note = payload === undefined ? '' : toolOutput(payload);
    const percent = fraction >= 0 ? `${Math.round(fraction * 100)}%` : '';
    return this.#update([percent, note].filter((part) => part !== '').join(' '));
  }

  partial(payload: unknown): Promise<void> {
    return this.#update(toolOutput(payload));
  }

  /** Aborts the tool once the task is terminal in the store (a client's `tasks/cancel`). */
  checkCancelled(): void {
    if (this.#controller.signal.aborted) return;
    this.#store.getTask(this.#taskId).then(
      (task) => {
        if (TERMINAL.has(task.status)) this.#abort(task.statusMessage);
      },
      () => this.#abort(undefined),
    );
  }

  async #update(message: string): Promise<void> {
    if (this.#controller.signal.aborted) return;
    try {
      await this.#store.updateTaskStatus(
        this.#taskId,
        'working',
        message === '' ? undefined : message,
      );
    } catch {
      // A terminal task takes no update: it was cancelled.
      this.checkCancelled();
    }
  }

  #abort(message: string | undefined): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(new ToolCancelledError(message ?? 'the MCP task was cancelled'));
  }
}
