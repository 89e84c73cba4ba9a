import { randomBytes } from 'node:crypto';
import { ToolCancelledError } from '../errors/index.js';
import type { ToolContext, ToolInputRequest, ToolInputResponse } from '../streamtool/index.js';
import type { ToolInputMethod } from '../streamtool/tool-context.js';
import { toolOutput } from '../streamtool/tool-output.js';
import {
  answeredEvent,
  checkCapability,
  checkRequest,
  isAnswerTo,
  requestedEvent,
} from './input-round.js';
import { McpInputError, MISSING_CAPABILITY_CODE } from './mcp-input-error.js';
import type { McpCallToolResult, McpToolServer } from './mcp-tool-server.js';
import type { ServedRequest } from './served-request.js';
import { refuse } from './served-refusals.js';
import type { ServedCall, StreamListener } from './served-tool.js';
import { statusNote } from './served-input-call.js';
import { ANY_OBJECT } from './any-object-schema.js';

/**
 * MCP 2026-07-28's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for tools served
 * on a 2.x `McpServer`, in one module until the SDK ships its own: a `tools/call` from a client
 * that declared the extension is answered at once with a `CreateTaskResult` while the tool runs
 * (its span from creation to the terminal status); `tasks/get` tells the status, the
 * `statusMessage` (the tool's last progress note or partial), and inlines the result, the error
 * or the questions the tool waits on (`inputRequests`); `tasks/update` brings the answers;
 * `tasks/cancel` aborts the tool's signal (cooperative: the ack comes at once). A client without
 * the extension gets a plain call of an `optional` tool and `-32021` for a `required` one.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** What served tasks ask of clients. */
export interface TaskExtensionOptions {
  pollIntervalMs: number;
  ttlMs: number;
  /** Tasks kept at once in this process; past it the oldest finished one is forgotten. */
  maxTasks: number;
}

interface Question {
  readonly method: ToolInputMethod;
  readonly params: Record<string, unknown>;
  resolve(response: ToolInputResponse): void;
}

/** One served task. */
class ServedTask {
  readonly taskId = randomBytes(12).toString('base64url');
  readonly toolName: string;
  readonly createdAt = new Date().toISOString();
  lastUpdatedAt = this.createdAt;
  status: TaskStatus = 'working';
  statusMessage: string | undefined;
  result: McpCallToolResult | undefined;
  /** A protocol error the task failed with (a tool's failure that carries a JSON-RPC code). */
  error: { code: number; message: string } | undefined;
  readonly controller: AbortController;
  readonly questions = new Map<string, Question>();
  served: ServedCall | undefined;
  #keys = 0;
  #rounds = 0;
  readonly #capabilities: Readonly<Record<string, unknown>> | undefined;

  constructor(
    toolName: string,
    capabilities: Readonly<Record<string, unknown>> | undefined,
    controller = new AbortController(),
  ) {
    this.toolName = toolName;
    this.#capabilities = capabilities;
    this.controller = controller;
  }

  /** Asks the client, through `tasks/get`'s `inputRequests`. */
  ask(request: ToolInputRequest): Promise<ToolInputResponse> {
    return this.#ask(request);
  }

  get context(): ToolContext {
    return {
      requestInput: (request) => this.#ask(request),
      clientCapabilities: this.#capabilities,
    };
  }

  setStatus(status: TaskStatus, message?: string): void {
    if (TERMINAL.has(this.status)) return;
    this.status = status;
    if (message !== undefined) this.statusMessage = message;
    this.lastUpdatedAt = new Date().toISOString();
  }

  /** The answers of a `tasks/update`, each to the question waiting under its key. */
  deliver(responses: Readonly<Record<string, unknown>>): void {
    for (const [key, question] of [...this.questions]) {
      const response = responses[key];
      if (!isAnswerTo(question.method, response)) continue;
      this.questions.delete(key);
      this.served?.relay.inputEvent(answeredEvent(key, question.method, response, this.#rounds));
      question.resolve(response);
    }
    if (this.questions.size === 0 && this.status === 'input_required') this.setStatus('working');
  }

  async #ask(request: ToolInputRequest): Promise<ToolInputResponse> {
    const signal = this.controller.signal;
    signal.throwIfAborted();
    checkRequest(this.toolName, request);
    checkCapability(this.toolName, request.method, this.#capabilities);
    const key = request.key ?? `input_${++this.#keys}`;
    if (this.questions.has(key)) {
      throw new McpInputError(
        'invalid-request',
        `MCP tool "${this.toolName}" asked twice under "${key}"`,
      );
    }
    this.served?.relay.inputEvent(requestedEvent(key, request, this.#rounds));
    if (this.questions.size === 0) this.#rounds += 1;
    return new Promise<ToolInputResponse>((resolve, reject) => {
      const onAbort = (): void => {
        this.questions.delete(key);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.questions.set(key, {
        method: request.method,
        params: request.params ?? {},
        resolve: (response) => {
          signal.removeEventListener('abort', onAbort);
          resolve(response);
        },
      });
      this.setStatus('input_required');
    });
  }

  /** The task's fields, as its `CreateTaskResult` (`task`) and `tasks/get` (`complete`) say. */
  fields(options: TaskExtensionOptions, resultType: 'task' | 'complete'): Record<string, unknown> {
    return {
      resultType,
      taskId: this.taskId,
      status: this.status,
      createdAt: this.createdAt,
      lastUpdatedAt: this.lastUpdatedAt,
      ttlMs: options.ttlMs,
      pollIntervalMs: options.pollIntervalMs,
    };
  }

  /** The task as `tasks/get` answers it. */
  view(options: TaskExtensionOptions): Record<string, unknown> {
    const view = this.fields(options, 'complete');
    if (this.statusMessage !== undefined) view.statusMessage = this.statusMessage;
    if (this.status === 'completed') view.result = this.result;
    if (this.status === 'failed') view.error = this.error;
    if (this.status === 'input_required') {
      const inputRequests: Record<string, unknown> = {};
      for (const [key, question] of this.questions) {
        inputRequests[key] = { method: question.method, params: question.params };
      }
      view.inputRequests = inputRequests;
    }
    return view;
  }
}

/** The tasks of this process, by id: shared by every server (a server per request is common). */
const tasks = new Map<string, ServedTask>();

function remember(task: ServedTask, options: TaskExtensionOptions): void {
  tasks.set(task.taskId, task);
  if (tasks.size <= options.maxTasks) return;
  for (const [taskId, old] of tasks) {
    if (TERMINAL.has(old.status)) {
      tasks.delete(taskId);
      return;
    }
  }
}

/** Whether the request's client declared the tasks extension. */
export function declaresTasks(request: ServedRequest): boolean {
  const extensions = request.clientCapabilities?.extensions as Record<string, unknown> | undefined;
  const declared = extensions?.[TASKS_EXTENSION];
  return declared !== null && typeof declared === 'object';
}

/** Refuses a `required` task tool to a client without the extension (`-32021`). */
export function refuseWithoutTasks(request: ServedRequest, toolName: string): McpCallToolResult {
  return refuse(
    request.handle,
    new McpInputError(
      'missing-capability',
      `MCP tool "${toolName}" runs only as a task, and the client did not declare the ` +
        `${TASKS_EXTENSION} extension`,
      {
        code: MISSING_CAPABILITY_CODE,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      },
    ),
  );
}

/**
 * Makes a task of a call that ran until now as a plain one (its first requests answered with
 * `input_required` rounds, SEP-2322 before SEP-2663): its abort controller becomes the task's,
 * its questions from now on go through `tasks/get`, `note` is the first status message.
 * Resolves with the `CreateTaskResult`.
 */
export function adoptTask(
  toolName: string,
  request: ServedRequest,
  options: TaskExtensionOptions,
  call: ServedCall,
  controller: AbortController,
  handOver: (ask: (question: ToolInputRequest) => Promise<ToolInputResponse>) => void,
  note: string | undefined,
): Record<string, unknown> {
  const task = new ServedTask(toolName, request.clientCapabilities, controller);
  if (note !== undefined) task.setStatus('working', note);
  handOver((question) => task.ask(question));
  return follow(task, call, options);
}

/** Keeps `task` for `tasks/*` while `call` runs it; the `CreateTaskResult`. */
function follow(
  task: ServedTask,
  call: ServedCall,
  options: TaskExtensionOptions,
): Record<string, unknown> {
  task.served = call;
  call.relay.listen(statusMessages(task));
  remember(task, options);
  void call.result.then((result) => {
    if (task.controller.signal.aborted) return;
    // A tool's failure is its result (isError, status completed); one that carries a JSON-RPC
    // code is a protocol error: the task fails with it.
    const code = (call.failure as { code?: unknown } | undefined)?.code;
    if (typeof code === 'number' && Number.isSafeInteger(code)) {
      task.error = { code, message: (call.failure as Error).message };
      task.setStatus('failed');
      return;
    }
    task.result = result;
    task.setStatus('completed');
  });
  const expiry = setTimeout(() => tasks.delete(task.taskId), options.ttlMs);
  expiry.unref();
  return task.fields(options, 'task');
}

/** A task's stream as its status message (the last progress note or partial). */
function statusMessages(task: ServedTask): StreamListener {
  return {
    progress: (fraction, payload) => {
      const message = statusNote(fraction, payload);
      if (message !== '') task.setStatus(task.status, message);
      return Promise.resolve();
    },
    partial: (payload) => {
      task.setStatus(task.status, toolOutput(payload));
      return Promise.resolve();
    },
  };
}

class TaskNotFound extends Error {
  readonly code = -32602;
  constructor(taskId: unknown) {
    super(`Task not found: ${String(taskId)}`);
  }
}

/** A task method from a client that did not declare the extension: `-32021`. */
class TaskMethodRefused extends Error {
  readonly code = MISSING_CAPABILITY_CODE;
  readonly data = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
  constructor() {
    super(`the client did not declare the ${TASKS_EXTENSION} extension`);
  }
}

/** What the task methods read of the 2.x handler context. */
interface HandlerContext {
  mcpReq?: { envelope?: Record<string, unknown>; inputResponses?: unknown };
}

const installed = new WeakSet<object>();

interface LowLevelServer {
  setRequestHandler(method: string, schemas: object, handler: (params: never) => unknown): void;
}

/** Registers `tasks/get`, `tasks/update` and `tasks/cancel` on the server (once). */
export function installTaskMethods(server: McpToolServer, options: TaskExtensionOptions): void {
  const protocol = server.server as unknown as LowLevelServer;
  if (installed.has(protocol) || typeof protocol.setRequestHandler !== 'function') return;
  installed.add(protocol);
  const find = (params: { taskId?: unknown }, context: HandlerContext | undefined): ServedTask => {
    const envelope = context?.mcpReq?.envelope;
    const capabilities = envelope?.['io.modelcontextprotocol/clientCapabilities'] as
      { extensions?: Record<string, unknown> } | undefined;
    if (envelope !== undefined && capabilities?.extensions?.[TASKS_EXTENSION] === undefined) {
      throw new TaskMethodRefused();
    }
    const task = typeof params?.taskId === 'string' ? tasks.get(params.taskId) : undefined;
    if (task === undefined) throw new TaskNotFound(params?.taskId);
    return task;
  };
  protocol.setRequestHandler(
    'tasks/get',
    { params: ANY_OBJECT },
    (params: { taskId?: unknown }, context?: HandlerContext) => find(params, context).view(options),
  );
  protocol.setRequestHandler(
    'tasks/update',
    { params: ANY_OBJECT },
    (params: { taskId?: unknown; inputResponses?: unknown }, context?: HandlerContext) => {
      const task = find(params, context);
      // The SDK lifts inputResponses out of a request's params into its context.
      const responses = context?.mcpReq?.inputResponses ?? params.inputResponses;
      if (responses !== null && typeof responses === 'object' && !Array.isArray(responses)) {
        task.deliver(responses as Record<string, unknown>);
      }
      return { resultType: 'complete' };
    },
  );
  protocol.setRequestHandler(
    'tasks/cancel',
    { params: ANY_OBJECT },
    (params: { taskId?: unknown }, context?: HandlerContext) => {
      const task = find(params, context);
      if (!TERMINAL.has(task.status)) {
        task.setStatus('cancelled', 'cancelled by the client');
        task.controller.abort(new ToolCancelledError('the MCP task was cancelled (tasks/cancel)'));
      }
      return { resultType: 'complete' };
    },
  );
  registerCapability(server);
}

function registerCapability(server: McpToolServer): void {
  const register = (
    server.server as unknown as { registerCapabilities?: (capabilities: object) => void }
  ).registerCapabilities;
  try {
    register?.call(server.server, { extensions: { [TASKS_EXTENSION]: {} } });
  } catch {
    // Connected already: the application declares the extension itself.
  }
}
