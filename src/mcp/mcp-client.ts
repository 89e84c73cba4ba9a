import type { McpToolDefinition } from './mcp-tool-definition.js';
import { ANY_OBJECT } from './any-object-schema.js';

/**
 * What tooltrace needs of an MCP client: the `Client` of either SDK line
 * (`@modelcontextprotocol/sdk` 1.x, `@modelcontextprotocol/client` 2.x). Described by shape so
 * neither line's types are needed to use the other.
 */
export interface McpClient {
  /** 1.x: `(params, resultSchema, options)`; 2.x: `(params, options)`. */
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    ...rest: never[]
  ): Promise<unknown>;
  listTools(params?: { cursor?: string }): Promise<{
    tools: readonly McpToolDefinition[];
    nextCursor?: string;
  }>;
  /** `undefined` until the initialize handshake is done. */
  getServerCapabilities(): object | undefined;
  /** The transport `connect()` was given; `undefined` before. */
  readonly transport?: unknown;
}

/** The options both lines' requests take that tooltrace passes. */
export interface McpCallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: McpProgress) => void;
  timeout?: number;
  resetTimeoutOnProgress?: boolean;
  maxTotalTimeout?: number;
  /** 2.x: the tool's definition, used in place of the client's cached listing. */
  toolDefinition?: object;
}

/** One `notifications/progress`, as both lines hand it to `onprogress`. */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** A task as `tools/call` with `task` and `tasks/get` return it (MCP 2025-11-25). */
export interface McpTask {
  taskId: string;
  status: string;
  statusMessage?: string;
  pollInterval?: number;
  /** How long the server keeps the task from its creation, ms; `null` for unlimited. */
  ttl?: number | null;
}

/** The task API of the 1.x line (`client.experimental.tasks`), as tooltrace uses it. */
export interface McpTaskApi {
  getTask(taskId: string, options?: McpCallOptions): Promise<McpTask>;
  getTaskResult(taskId: string, resultSchema?: unknown, options?: McpCallOptions): Promise<unknown>;
  cancelTask(taskId: string, options?: McpCallOptions): Promise<unknown>;
}

interface LegacyClient {
  experimental?: { tasks?: Partial<McpTaskApi> };
  request(request: unknown, resultSchema: unknown, options?: unknown): Promise<unknown>;
  callTool(params: unknown, resultSchema: unknown, options?: McpCallOptions): Promise<unknown>;
}

interface ModernClient {
  callTool(params: unknown, options?: McpCallOptions): Promise<unknown>;
  getNegotiatedProtocolVersion?: () => unknown;
}

/** Whether `client` is of the 1.x line: it has `experimental.tasks` (1.24 on). */
export function isLegacyClient(client: McpClient): boolean {
  const tasks = (client as unknown as LegacyClient).experimental?.tasks;
  return typeof tasks?.getTask === 'function';
}

/** One plain `tools/call`, with `options` where the client's line takes them. */
export function callToolOn(
  client: McpClient,
  params: Record<string, unknown> & { name: string },
  options: McpCallOptions,
): Promise<unknown> {
  if (isLegacyClient(client)) {
    return (client as unknown as LegacyClient).callTool(params, undefined, options);
  }
  return (client as unknown as ModernClient).callTool(params, options);
}

/** The 1.x task API of `client`, or `undefined` on the 2.x line (it has none yet). */
export function taskApiOf(client: McpClient): (McpTaskApi & { client: LegacyClient }) | undefined {
  const tasks = (client as unknown as LegacyClient).experimental?.tasks;
  if (
    typeof tasks?.getTask !== 'function' ||
    typeof tasks.getTaskResult !== 'function' ||
    typeof tasks.cancelTask !== 'function'
  ) {
    return undefined;
  }
  const api = tasks as McpTaskApi;
  return {
    client: client as unknown as LegacyClient,
    getTask: (taskId, options) => api.getTask(taskId, options),
    getTaskResult: (taskId, schema, options) => api.getTaskResult(taskId, schema, options),
    cancelTask: (taskId, options) => api.cancelTask(taskId, options),
  };
}

/** The negotiated protocol version when the client tells it (2.x does, 1.x only over HTTP). */
export function protocolVersionOf(client: McpClient): string | undefined {
  const modern = (client as unknown as ModernClient).getNegotiatedProtocolVersion;
  if (typeof modern === 'function') {
    const version = modern.call(client);
    if (typeof version === 'string') return version;
  }
  const version = (client.transport as { protocolVersion?: unknown } | undefined)?.protocolVersion;
  return typeof version === 'string' ? version : undefined;
}

interface RequestingClient {
  request(request: unknown, resultSchema: unknown, options?: unknown): Promise<unknown>;
}

/**
 * One request of a method the 2.x client has no helper for (the tasks extension's `tasks/get`,
 * `tasks/update`, `tasks/cancel`), sent through its own `request()` so it carries the client's
 * `_meta` envelope and routing headers. Rejects when the client has no `request()`.
 */
export async function requestOn(
  client: McpClient,
  method: string,
  params: Record<string, unknown>,
  options: { signal?: AbortSignal; timeout?: number } = {},
): Promise<Record<string, unknown>> {
  const request = (client as unknown as Partial<RequestingClient>).request;
  if (typeof request !== 'function') {
    throw new TypeError(`this MCP client has no request() to send ${method} with`);
  }
  return (await request.call(client, { method, params }, ANY_OBJECT, options)) as Record<
    string,
    unknown
  >;
}

/** Sends `tasks/cancel` (2026-07-28) for `taskId`, not waiting: a finished task refuses, fine. */
export function cancelTask(client: McpClient, taskId: string): void {
  requestOn(client, 'tasks/cancel', { taskId }).catch(() => {});
}
