import { randomBytes } from 'node:crypto';
import { context, propagation } from '@opentelemetry/api';
import { EventBus } from '../bus/index.js';
import type { ToolCall } from '../events/index.js';
import type { ChannelTool, ToolContext } from '../streamtool/index.js';
import { bridge } from '../streamtool/index.js';
import { runAsInvokeHandler } from '../streamtool/run-as-invoke-handler.js';
import { messageOf, toolOutput } from '../streamtool/tool-output.js';
import { ATTR_JSONRPC_REQUEST_ID } from './mcp-attribute-names.js';
import type { McpCallToolResult, McpRegisteredTool, McpToolServer } from './mcp-tool-server.js';
import { networkTransportOf } from './network-transport.js';
import { ProgressNotifier } from './progress-notifier.js';
import { registerTaskTool } from './serve-mcp-task.js';
import { servedRequestOf, type ServedRequest } from './served-request.js';
import { StreamRelay, type McpServedTool, type ServedCall } from './served-tool.js';
import { mcpCallAttributes } from './protocol-version.js';
import { directInputContext } from './served-direct-input.js';
import {
  ServedInputCall,
  waitingCall,
  type ServedAnswer,
  type WaitingLimits,
} from './served-input-call.js';
import { answerRefusals, refuse } from './served-refusals.js';
import {
  adoptTask,
  declaresTasks,
  installTaskMethods,
  refuseWithoutTasks,
  type TaskExtensionOptions,
} from './serve-mcp-task-extension.js';
import { openState } from './request-state-seal.js';
import { INVALID_PARAMS_CODE, McpInputError } from './mcp-input-error.js';

/** Options for {@link serveMcpTools}. */
export interface ServeMcpToolsOptions {
  /**
   * The bus each call is emitted on (`tool.invoke`, its stream, `tool.result`), so a tracer on it
   * draws the call; its span continues the trace context the client sent in `params._meta`.
   * Without one, calls run on a private bus nobody watches, which keeps no events (no replay ring).
   */
  bus?: EventBus;
  /**
   * `source` of the events each call emits.
   * @default 'mcp.server'
   */
  source?: string;
  /**
   * `network.transport` on each call's span.
   * @default `pipe` for stdio, `tcp` for Streamable HTTP, none for others
   */
  networkTransport?: string;
  /**
   * The `pollInterval` (2025-11-25) or `pollIntervalMs` (2026-07-28) a served task asks clients to
   * keep between `tasks/get`, milliseconds.
   * @default 500
   */
  taskPollInterval?: number;
  /**
   * How long a served task's result is kept (`ttl`, 2026-07-28 `ttlMs`), milliseconds.
   * @default 300000
   */
  taskTtl?: number;
  /**
   * How long a call that asked for input (over MCP 2026-07-28) waits for the client to come back
   * with the answers, milliseconds; then it ends cancelled, and its `requestState` is refused.
   * @default 600000
   */
  inputTimeout?: number;
  /**
   * How many calls of this process may wait for answers at once; past it the oldest ends
   * cancelled.
   * @default 1000
   */
  maxWaitingCalls?: number;
}

/**
 * Serves `tools` on `server` (an `McpServer` of either SDK line, 1.x or 2.x, before it
 * connects), each under its `name`. A call runs the tool through `bridge`: its `progress` events
 * become `notifications/progress` when the client sent a progress token (`progress` strictly
 * increasing, as MCP requires, the fraction as `progress/total`), its `partial` events progress
 * notifications whose `message` is the partial, its final payload the result (a string as one text item, an object as its JSON text and as
 * `structuredContent`, a `CallToolResult` as it is), and a failure a result with `isError`. A
 * client's `notifications/cancelled` aborts the tool. With a `bus`, the call's `tool.invoke`
 * carries `mcp.method.name`, `jsonrpc.request.id`, `mcp.session.id` and `network.transport` as
 * span attributes, and is emitted inside the context extracted from `params._meta` through the
 * configured propagators, so the bus's tracer (`traceToolCalls`) records each call's duration as
 * `mcp.server.operation.duration` through its own `meterProvider`. Returns the registered tools.
 */
export function serveMcpTools(
  server: McpToolServer,
  tools: readonly (ChannelTool | McpServedTool)[],
  options: ServeMcpToolsOptions = {},
): McpRegisteredTool[] {
  // Both lines' registerTool take (name, config, callback); the callback's context differs and
  // is read through servedRequestOf.
  const givenServer: unknown = server;
  if (
    givenServer === null ||
    typeof givenServer !== 'object' ||
    typeof server.registerTool !== 'function'
  ) {
    throw new TypeError('server must be an McpServer');
  }
  const givenTools: unknown = tools;
  if (!Array.isArray(givenTools)) throw new TypeError('tools must be an array of ChannelTools');
  const bus = options.bus ?? new EventBus({ ringSize: 0 });
  const source = options.source ?? 'mcp.server';
  return tools.map((entry) => {
    const served: McpServedTool = 'tool' in entry ? entry : { tool: entry };
    const tool = served.tool;
    if (tool === null || typeof tool !== 'object' || typeof tool.stream !== 'function') {
      throw new TypeError('each tool must be a ChannelTool (name and stream) or { tool, … }');
    }
    const config = {
      title: served.title,
      description: served.description,
      inputSchema: served.inputSchema,
      annotations: served.annotations,
    };
    const taskOptions: TaskExtensionOptions = {
      pollIntervalMs: Math.round(options.taskPollInterval ?? 500),
      ttlMs: Math.round(options.taskTtl ?? 300_000),
      maxTasks: 1000,
    };
    /** MCP 2026-07-28 tasks (the extension) on the 2.x line. */
    const serveTask = async (
      input: Record<string, unknown>,
      extra: unknown,
    ): Promise<ServedAnswer | Record<string, unknown>> => {
      const request = servedRequestOn(server, extra);
      const network = networkOf(server, options);
      if (!declaresTasks(request)) {
        if (served.execution?.taskSupport === 'required') {
          return refuseWithoutTasks(request, tool.name);
        }
        return serveAsking(server, bus, source, served, input, request, network, limits);
      }
      // Asked at once, the tool's questions go in input_required rounds; then it is a task.
      return serveAsking(server, bus, source, served, input, request, network, limits, taskOptions);
    };
    const limits: WaitingLimits = {
      timeout: positive(options.inputTimeout, 'inputTimeout') ?? 600_000,
      maxWaiting: positive(options.maxWaitingCalls, 'maxWaitingCalls') ?? 1000,
    };
    if (served.execution !== undefined && hasLegacyTasks(server)) {
      return registerTaskTool(
        server,
        served,
        config,
        (input, extra, signal) =>
          startCall(
            bus,
            source,
            served,
            input,
            servedRequestOf(extra),
            networkOf(server, options),
            signal,
          ),
        { pollInterval: options.taskPollInterval ?? 500, ttl: options.taskTtl ?? 300_000 },
      );
    }
    const serve = async (
      input: Record<string, unknown>,
      extra: unknown,
    ): Promise<ServedAnswer | Record<string, unknown>> => {
      const request = servedRequestOn(server, extra);
      const network = networkOf(server, options);
      if (request.handle !== undefined) {
        return serveAsking(server, bus, source, served, input, request, network, limits);
      }
      const running: { call?: ServedCall } = {};
      const context = directInputContext(
        tool.name,
        request,
        clientCapabilitiesOf(server),
        () => running.call?.relay,
        request.signal,
      );
      const call = startCall(bus, source, served, input, request, network, request.signal, context);
      running.call = call;
      call.relay.listen(new ProgressNotifier(request));
      return call.result;
    };
    const execution = served.execution;
    const handler = execution === undefined ? serve : serveTask;
    // With a schema the SDK passes (arguments, extra), without one just (extra).
    const callback =
      served.inputSchema === undefined
        ? (extra: unknown) => handler({}, extra)
        : (input: Record<string, unknown>, extra: unknown) => handler(input, extra);
    const registered = server.registerTool(
      tool.name,
      (execution === undefined ? config : { ...config, execution }) as never,
      callback as never,
    );
    if (execution !== undefined) {
      // The 2.x registerTool leaves `execution` out of what tools/list tells; the listing reads
      // it from the registered tool.
      (registered as unknown as { execution?: unknown }).execution = execution;
      installTaskMethods(server, taskOptions);
    }
    answerRefusals(server.server);
    return registered;
  });
}

/**
 * One request of a call on the 2.x line, which may ask for input: the first starts the tool, a
 * later one (with a `requestState` tooltrace sealed) finds the call that waits for its answers.
 * A state that fails its check, or names a call no longer waiting, is refused with `-32602`; a
 * call that failed because the client lacks a capability its question needs, with `-32021`.
 */
async function serveAsking(
  server: McpToolServer,
  bus: EventBus,
  source: string,
  served: McpServedTool,
  input: Record<string, unknown>,
  request: ServedRequest,
  network: string | undefined,
  limits: WaitingLimits,
  tasks?: TaskExtensionOptions,
): Promise<ServedAnswer | Record<string, unknown>> {
  const name = served.tool.name;
  /** The request's answer: a task made of the call (task-first calls), or what the call says. */
  const settle = (
    asking: ServedInputCall,
    answer: ServedAnswer | 'task',
  ): ServedAnswer | Record<string, unknown> => {
    if (answer !== 'task') return refusedIfMissing(request, answer, asking.served);
    return adoptTask(
      name,
      request,
      tasks!,
      asking.served!,
      asking.controller,
      (ask) => asking.handOver(ask),
      asking.lastNote,
    );
  };
  if (request.requestState !== undefined) {
    const state = request.requestState;
    const opened = typeof state === 'string' ? openState(state, name) : undefined;
    const waiting = opened === undefined ? undefined : waitingCall(opened.call);
    if (waiting === undefined || waiting.round !== opened?.round || waiting.attached) {
      return refuse(
        request.handle,
        new McpInputError(
          'invalid-state',
          'Invalid or expired requestState: it fails its integrity check, has expired, or ' +
            `names a call of "${name}" that no longer waits for answers`,
          { code: INVALID_PARAMS_CODE, data: { reason: 'invalid_request_state' } },
        ),
      );
    }
    return settle(waiting, await waiting.answer(request, true));
  }
  const controller = new AbortController();
  const asking = new ServedInputCall(
    name,
    { ...request, clientCapabilities: request.clientCapabilities ?? clientCapabilitiesOf(server) },
    controller,
    limits,
    tasks !== undefined,
  );
  const call = startCall(
    bus,
    source,
    served,
    input,
    request,
    network,
    controller.signal,
    asking.context,
  );
  asking.bind(call);
  return settle(asking, await asking.answer(request, false));
}

/** The answer, or the refusal a call that failed for a refused question ends its request with. */
function refusedIfMissing(
  request: ServedRequest,
  answer: ServedAnswer,
  call: ServedCall | undefined,
): ServedAnswer {
  const failure = call?.failure;
  if (answer.isError === true && failure instanceof McpInputError && failure.code !== undefined) {
    return refuse(request.handle, failure);
  }
  return answer;
}

/** Whether the server is of the 1.x line, with its SEP-1686 task API (`registerToolTask`). */
function hasLegacyTasks(server: McpToolServer): boolean {
  const tasks = (server as unknown as { experimental?: { tasks?: { registerToolTask?: unknown } } })
    .experimental?.tasks;
  return typeof tasks?.registerToolTask === 'function';
}

/** The capabilities a 2025-11-25 client declared at initialize, when the server tells. */
function clientCapabilitiesOf(server: McpToolServer): Record<string, unknown> | undefined {
  const read = (server.server as { getClientCapabilities?: () => unknown }).getClientCapabilities;
  const capabilities: unknown = typeof read === 'function' ? read.call(server.server) : undefined;
  return capabilities !== null && typeof capabilities === 'object'
    ? (capabilities as Record<string, unknown>)
    : undefined;
}

/**
 * What the SDK tells a served call about its request, with the protocol version the session
 * negotiated when the request itself does not carry one (2025-11-25 peers).
 */
function servedRequestOn(server: McpToolServer, extra: unknown): ServedRequest {
  const given = servedRequestOf(extra);
  return { ...given, protocolVersion: given.protocolVersion ?? negotiatedVersionOf(server) };
}

function negotiatedVersionOf(server: McpToolServer): string | undefined {
  const read = (server.server as { getNegotiatedProtocolVersion?: () => unknown })
    .getNegotiatedProtocolVersion;
  const version: unknown = typeof read === 'function' ? read.call(server.server) : undefined;
  return typeof version === 'string' ? version : undefined;
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
    throw new RangeError(`options.${name} must be a positive number, got ${String(value)}`);
  }
  return value;
}

/**
 * Starts one served call: the tool run through bridge on the bus, as a `tool.invoke` inside the
 * context the request's `_meta` carries. Its stream goes to whatever listens on `relay`; `result`
 * resolves with the `CallToolResult` (a failure as `isError`; never rejects). `signal` aborts the
 * tool (the request's, or a task's own).
 */
export function startCall(
  bus: EventBus,
  source: string,
  served: McpServedTool,
  input: Record<string, unknown>,
  request: ServedRequest,
  network: string | undefined,
  signal: AbortSignal = request.signal,
  toolContext?: ToolContext,
): ServedCall {
  const name = served.tool.name;
  const requestId = String(request.requestId);
  const attributes = mcpCallAttributes(request.protocolVersion, request.sessionId, network);
  attributes[ATTR_JSONRPC_REQUEST_ID] = requestId;
  const call: ToolCall = {
    id: `mcp_${requestId}_${randomBytes(4).toString('hex')}`,
    name,
    arguments: input,
    attributes,
  };
  if (served.description !== undefined) call.description = served.description;
  const relay = new StreamRelay(served.tool, toolContext);
  const parent = propagation.extract(context.active(), request.meta ?? {});
  const running: { -readonly [K in keyof ServedCall]: ServedCall[K] } = {
    call,
    relay,
    result: Promise.resolve({ content: [] }),
  };
  running.result = (async (): Promise<McpCallToolResult> => {
    try {
      await context.with(parent, () =>
        runAsInvokeHandler(bus, call, source, () => bridge(bus, relay, call, { signal, source })),
      );
    } catch (error) {
      running.failure = error;
      return { content: [{ type: 'text', text: messageOf(error) }], isError: true };
    }
    return resultOf(relay.output);
  })();
  return running;
}

/** The `CallToolResult` for a tool's final payload. */
export function resultOf(payload: unknown): McpCallToolResult {
  if (isCallToolResult(payload)) return payload;
  const result: McpCallToolResult = { content: [{ type: 'text', text: toolOutput(payload) }] };
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    result.structuredContent = payload as Record<string, unknown>;
  }
  return result;
}

function isCallToolResult(payload: unknown): payload is McpCallToolResult {
  return (
    payload !== null &&
    typeof payload === 'object' &&
    Array.isArray((payload as { content?: unknown }).content)
  );
}

function networkOf(server: McpToolServer, options: ServeMcpToolsOptions): string | undefined {
  return options.networkTransport ?? networkTransportOf(server.server.transport);
}
