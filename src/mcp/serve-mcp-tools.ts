import { randomBytes } from 'node:crypto';
import { context, propagation } from '@opentelemetry/api';
import { EventBus } from '../bus/index.js';
import type { ToolAttributeValue, ToolCall } from '../events/index.js';
import type { ChannelTool } from '../streamtool/index.js';
import { bridge } from '../streamtool/index.js';
import { runAsInvokeHandler } from '../streamtool/run-as-invoke-handler.js';
import { messageOf, toolOutput } from '../streamtool/tool-output.js';
import {
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_SESSION_ID,
  ATTR_NETWORK_TRANSPORT,
  METHOD_TOOLS_CALL,
} from './mcp-attribute-names.js';
import { refuseMeterProvider } from './refuse-meter-provider.js';
import type { McpCallToolResult, McpRegisteredTool, McpToolServer } from './mcp-tool-server.js';
import { networkTransportOf } from './network-transport.js';
import { ProgressNotifier } from './progress-notifier.js';
import { registerTaskTool } from './serve-mcp-task.js';
import { servedRequestOf, type ServedRequest } from './served-request.js';
import { StreamRelay, type McpServedTool, type ServedCall } from './served-tool.js';

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
   * The `pollInterval` a served task asks clients to keep between `tasks/get`, milliseconds.
   * @default 500
   */
  taskPollInterval?: number;
  /**
   * How long a served task's result is kept after it ends (`ttl`), milliseconds.
   * @default 300000
   */
  taskTtl?: number;
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
  refuseMeterProvider('serveMcpTools', options);
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
    if (served.execution !== undefined) {
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
    ): Promise<McpCallToolResult> => {
      const request = servedRequestOf(extra);
      const call = startCall(bus, source, served, input, request, networkOf(server, options));
      call.relay.listen(new ProgressNotifier(request));
      return call.result;
    };
    // With a schema the SDK passes (arguments, extra), without one just (extra).
    const callback =
      served.inputSchema === undefined
        ? (extra: unknown) => serve({}, extra)
        : (input: Record<string, unknown>, extra: unknown) => serve(input, extra);
    return server.registerTool(tool.name, config as never, callback as never);
  });
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
): ServedCall {
  const name = served.tool.name;
  const requestId = String(request.requestId);
  const attributes: Record<string, ToolAttributeValue> = {
    [ATTR_MCP_METHOD_NAME]: METHOD_TOOLS_CALL,
    [ATTR_JSONRPC_REQUEST_ID]: requestId,
  };
  if (request.sessionId !== undefined) attributes[ATTR_MCP_SESSION_ID] = request.sessionId;
  if (network !== undefined) attributes[ATTR_NETWORK_TRANSPORT] = network;
  const call: ToolCall = {
    id: `mcp_${requestId}_${randomBytes(4).toString('hex')}`,
    name,
    arguments: input,
    attributes,
  };
  if (served.description !== undefined) call.description = served.description;
  const relay = new StreamRelay(served.tool);
  const parent = propagation.extract(context.active(), request.meta ?? {});
  const result = (async (): Promise<McpCallToolResult> => {
    try {
      await context.with(parent, () =>
        runAsInvokeHandler(bus, call, source, () => bridge(bus, relay, call, { signal, source })),
      );
    } catch (error) {
      return { content: [{ type: 'text', text: messageOf(error) }], isError: true };
    }
    return resultOf(relay.output);
  })();
  return { call, relay, result };
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
