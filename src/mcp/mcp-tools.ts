import { context, diag, propagation } from '@opentelemetry/api';
import type { ToolAttributeValue } from '../events/index.js';
import type { ChannelTool } from '../streamtool/index.js';
import { ToolChannel } from '../streamtool/index.js';
import { ATTR_GEN_AI_TOOL_DESCRIPTION, ATTR_JSONRPC_REQUEST_ID } from './mcp-attribute-names.js';
import {
  callToolOn,
  isLegacyClient,
  protocolVersionOf,
  taskApiOf,
  type McpCallOptions,
  type McpClient,
  type McpProgress,
} from './mcp-client.js';
import { awaitHandshake } from './await-handshake.js';
import { CheckedToolList, type RefusedMcpTool } from './checked-tool-list.js';
import { failCall, settleCall } from './mcp-call-outcome.js';
import type { McpToolDefinition } from './mcp-tool-definition.js';
import { runTaskCall, type TaskCallOptions } from './mcp-task-call.js';
import { networkTransportOf } from './network-transport.js';
import { ProgressRelay } from './progress-relay.js';
import { onProgressReceived } from './received-progress.js';
import { onRequestSent } from './sent-request-ids.js';
import { callWithInputRounds, type McpInputHandler } from './mcp-input-call.js';
import { followExtensionTask } from './mcp-task-extension-call.js';
import { mcpCallAttributes } from './protocol-version.js';

/** Options for {@link mcpTools}. */
export interface McpToolsOptions {
  /**
   * `network.transport` of every call.
   * @default `pipe` for a stdio transport, `tcp` for the HTTP ones, none for others
   */
  networkTransport?: string;
  /**
   * `mcp.protocol.version` of every call. The 1.x client keeps the negotiated version to
   * itself unless its transport is HTTP, so give it for stdio when you want it on spans.
   * @default what the client negotiated, when it tells (2.x, or an HTTP transport)
   */
  protocolVersion?: string;
  /** Options for each request (`timeout`, `resetTimeoutOnProgress`, …). */
  requestOptions?: Omit<McpCallOptions, 'signal' | 'onprogress'>;
  /**
   * The most pages of `tools/list` read; a server that keeps answering with a cursor stops there.
   * The 2.x client pages by itself when asked for a cursor-less list and fails past 64 pages, so
   * on that line each page is still asked for by cursor here and this bound holds as on 1.x.
   * @default 100
   */
  maxPages?: number;
  /**
   * The most tools taken; later ones are refused (see {@link McpToolsOptions.onRefused}).
   * @default 1000
   */
  maxTools?: number;
  /**
   * Called once, after listing, with the tools refused: a later duplicate of a name, a name
   * that is empty, not a string, over 128 characters or holds control characters, an
   * `inputSchema` that is not an object schema, tools past `maxTools`. Either way one
   * `diag.warn` names the first five and counts the rest; the other tools are wired as usual.
   */
  onRefused?: (refused: readonly RefusedMcpTool[]) => void;
  /**
   * Which tools are called as MCP tasks (2025-11-25, SDK 1.x): `required` calls only those the
   * server lists with `execution.taskSupport: "required"` (they cannot be called otherwise),
   * `optional` those with `"optional"` too. Only when the server has the tasks capability for
   * `tools/call`. On the 2.x client (MCP 2026-07-28 tasks extension) the server decides instead:
   * a client that declares `extensions: { 'io.modelcontextprotocol/tasks': {} }` in its
   * capabilities has every task the server makes of a call followed to its end (polled with
   * `tasks/get`, its questions answered by `inputHandler` with `tasks/update`, an abort sent as
   * `tasks/cancel`), with the same interval, deadline and trace as here.
   * @default 'required'
   */
  tasks?: 'required' | 'optional';
  /**
   * How long the server keeps a finished task's result (`task.ttl`, milliseconds).
   * @default the server's choice
   */
  taskTtl?: number;
  /**
   * How long to wait between `tasks/get` polls when the server gives no `pollInterval`. What
   * the server gives is held to `taskMinPollInterval` to 30 s (a `pollInterval` of 0 would
   * otherwise poll ~730 times a second; 1e12 is 1 ms to Node).
   * @default 1000
   */
  taskPollInterval?: number;
  /**
   * The shortest wait between polls whatever the server asks for (at most 10 polls a second by
   * default).
   * @default 100
   */
  taskMinPollInterval?: number;
  /**
   * How long a task call may go on from the task's creation, in ms; the task's own `ttl` ends
   * it sooner. Past it the call sends `tasks/cancel` and fails with `error.type=task_deadline`.
   * While it polls, an unchanged status is repeated as a progress event every 30 s, so the
   * tracer's `idleTimeoutMs` (keep it above 30 s) never abandons a call still being polled.
   * @default 3600000 (one hour)
   */
  taskDeadline?: number;
  /**
   * How long `mcpTools` waits for a client whose `connect()` is still running; a `connect()`
   * that fails meanwhile (its transport closes or reports an error) is refused at once.
   * @default 10000
   */
  connectTimeout?: number;
  /**
   * Answers the questions a called tool asks mid-call (MCP 2026-07-28 `input_required`, 2.x
   * client): elicitation, sampling, roots. Each question and answer is an event of the call's one
   * span. Without it a tool that asks fails at once, naming this option.
   * @default none
   */
  inputHandler?: McpInputHandler;
  /**
   * The most input rounds one call may take before it fails.
   * @default 10
   */
  maxInputRounds?: number;
}

/** A tool an MCP server lists, as a {@link ChannelTool}; its definition as the server gave it. */
export interface McpChannelTool extends ChannelTool {
  /** The tool's definition from `tools/list` (description, input schema, annotations). */
  readonly definition: McpToolDefinition;
  /**
   * Whether a call runs as an MCP 2025-11-25 task (see {@link McpToolsOptions.tasks}). On the 2.x
   * client a 2026-07-28 server decides per call, and a task it makes is followed whatever this says.
   */
  readonly runsAsTask: boolean;
}

/** How many progress notifications a call holds for bridge before coalescing further ones. */
const CHANNEL_CAPACITY = 64;

/**
 * The tools `client` lists (every page of `tools/list`), each as a {@link ChannelTool} named as
 * the server names it. `client` is a `Client` of either SDK line (`@modelcontextprotocol/sdk`
 * 1.x, `@modelcontextprotocol/client` 2.x), connected — or connecting: the listing waits for the
 * handshake (a failed `connect()` is refused at once); a client never connected is refused with
 * {@link McpNotConnectedError}. A call
 * sends `tools/call` with a progress token: each progress notification becomes a `progress`
 * event (the fraction `progress/total` when `total` is known, else unknown; its `message` as the
 * payload); the result's `content` (and `structuredContent`) the `complete` payload; `isError`
 * an `error` ({@link McpToolError}, `error.type=tool_error`); a JSON-RPC error an `error` with
 * its code as `error.type`. The call's signal cancels the request. A tool the server runs as a
 * task (see {@link McpToolsOptions.tasks}) is one call from `tools/call` to the task's result:
 * each status change a progress event, the abort a `tasks/cancel`. The request carries the
 * active OpenTelemetry context in `params._meta` through the configured propagators, so a server
 * that reads it joins the trace under the call's `execute_tool` span, and the span gets the MCP
 * attributes (`mcp.method.name`, `jsonrpc.request.id` as sent, `network.transport`,
 * `mcp.session.id` and `mcp.protocol.version` when known) and the tool's description, however
 * the call ends. A tracer on the bus (`traceToolCalls`) records each call's duration as
 * `mcp.client.operation.duration` through its own `meterProvider`, from these attributes.
 */
export async function mcpTools(
  client: McpClient,
  options: McpToolsOptions = {},
): Promise<McpChannelTool[]> {
  if (
    client === null ||
    typeof client !== 'object' ||
    typeof client.callTool !== 'function' ||
    typeof client.listTools !== 'function'
  ) {
    throw new TypeError('client must be an MCP Client (@modelcontextprotocol/sdk or /client)');
  }
  await awaitHandshake(client, options.connectTimeout ?? 10_000);
  const maxPages = checkCount(options.maxPages, 'maxPages', 100);
  const checked = new CheckedToolList(checkCount(options.maxTools, 'maxTools', 1000));
  for (const name of ['taskPollInterval', 'taskMinPollInterval', 'taskDeadline'] as const) {
    checkCount(options[name], name, 0, name === 'taskMinPollInterval' ? 0 : 1);
  }
  if (options.onRefused !== undefined && typeof options.onRefused !== 'function') {
    throw new TypeError('options.onRefused must be a function');
  }
  const taskCapable = hasToolTasks(client.getServerCapabilities());
  const tools: McpChannelTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page += 1) {
    const listed = await listPage(client, cursor);
    const entries: unknown = (listed as { tools?: unknown } | undefined)?.tools;
    for (const entry of Array.isArray(entries) ? (entries as unknown[]) : []) {
      const definition = checked.take(entry);
      if (definition !== undefined) {
        tools.push(new McpTool(client, definition, options, taskCapable));
      }
    }
    const next = (listed as { nextCursor?: unknown } | undefined)?.nextCursor;
    cursor = typeof next === 'string' ? next : undefined;
    // A cursor seen before would list the same pages again.
    if (cursor === undefined || seen.has(cursor)) break;
    seen.add(cursor);
  }
  const diagnostic = checked.diagnostic();
  if (diagnostic !== undefined) {
    diag.warn(diagnostic);
    try {
      options.onRefused?.(checked.refused);
    } catch {
      // The caller's hook failing changes nothing about the tools that were taken.
    }
  }
  return tools;
}

/**
 * One page of `tools/list`. The 2.x client, asked without a cursor, reads every page itself
 * (and gives up past 64): an empty cursor is not a cursor to it, so the first page is asked
 * for with the request sent directly where the client has `request()` and no 1.x task API.
 */
async function listPage(
  client: McpClient,
  cursor: string | undefined,
): Promise<{ tools?: unknown; nextCursor?: unknown }> {
  if (cursor === undefined && !isLegacyClient(client)) {
    const request = (client as { request?: unknown }).request;
    if (typeof request === 'function') {
      const page = (await (request as (request: unknown) => Promise<unknown>).call(client, {
        method: 'tools/list',
        params: {},
      })) as { tools?: unknown; nextCursor?: unknown };
      // What the 2.x client's own listing does to every page it returns (SEP-2243).
      const exclude = (client as { _excludeInvalidXMcpHeaderTools?: unknown })
        ._excludeInvalidXMcpHeaderTools;
      if (typeof exclude === 'function' && Array.isArray(page?.tools)) exclude.call(client, page);
      return page;
    }
  }
  return client.listTools(cursor === undefined ? undefined : { cursor });
}

function checkCount(value: unknown, name: string, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
    throw new TypeError(
      `options.${name} must be an integer >= ${minimum}, got ${JSON.stringify(value) ?? typeof value}`,
    );
  }
  return value;
}

function hasToolTasks(capabilities: object | undefined): boolean {
  const tasks = (capabilities as { tasks?: { requests?: { tools?: { call?: unknown } } } })?.tasks;
  return tasks?.requests?.tools?.call !== undefined;
}

/** One listed tool: each `stream()` is one `tools/call`. */
class McpTool implements McpChannelTool {
  readonly name: string;
  readonly definition: McpToolDefinition;
  readonly runsAsTask: boolean;
  readonly #client: McpClient;
  readonly #options: McpToolsOptions;

  constructor(
    client: McpClient,
    definition: McpToolDefinition,
    options: McpToolsOptions,
    taskCapable: boolean,
  ) {
    this.name = definition.name;
    this.definition = definition;
    this.#client = client;
    this.#options = options;
    const support = definition.execution?.taskSupport;
    this.runsAsTask =
      taskCapable &&
      (support === 'required' || (support === 'optional' && options.tasks === 'optional'));
  }

  stream(signal: AbortSignal, input: Record<string, unknown>): ToolChannel {
    const channel = new ToolChannel({ capacity: CHANNEL_CAPACITY });
    const meta: Record<string, string> = {};
    propagation.inject(context.active(), meta);
    channel.annotate(this.#attributes());
    // A fresh object per call: the request that carries it is this call's (sent-request-ids).
    const argumentsObject = { ...input };
    const relay = new ProgressRelay(channel, this.name);
    // Progress is strictly increasing per request (the MCP spec's MUST, per progress token): a
    // value heard both on the transport and from the SDK's onprogress is taken once, the first
    // time. A request that carries the call again (input rounds) counts from 1 again.
    let lastProgress = Number.NEGATIVE_INFINITY;
    const newRequest = (): void => {
      lastProgress = Number.NEGATIVE_INFINITY;
    };
    const onprogress = (progress: McpProgress): void => {
      if (channel.closed || !(progress.progress > lastProgress)) return;
      lastProgress = progress.progress;
      relay.offer(fractionOf(progress), progress.message);
    };
    const transport = this.#client.transport;
    let stopHearing = (): void => {};
    const stopWatching = onRequestSent(transport, argumentsObject, (id) => {
      channel.annotate({ [ATTR_JSONRPC_REQUEST_ID]: id });
      // The SDKs use the request's id as its progress token.
      stopHearing = onProgressReceived(transport, id, onprogress);
    });
    const params = { name: this.name, arguments: argumentsObject, _meta: meta };
    const callOptions: McpCallOptions = { ...this.#options.requestOptions, signal, onprogress };
    const running = this.runsAsTask
      ? this.#runTask(channel, params, callOptions, signal)
      : isLegacyClient(this.#client)
        ? callToolOn(this.#client, params, callOptions).then((result) => {
            relay.flush();
            return settleCall(channel, this.name, result);
          })
        : this.#callModern(
            channel,
            params,
            this.#roundOptions(callOptions),
            signal,
            newRequest,
          ).then((result) => {
            relay.flush();
            return result === undefined ? undefined : settleCall(channel, this.name, result);
          });
    running
      .catch((error: unknown) => {
        relay.flush();
        // A cancelled call already has its result (bridge answered the abort).
        if (signal.aborted) return channel.close();
        return failCall(channel, error);
      })
      .catch(() => {
        // The channel was closed by its reader (the call ended first): nothing is left to tell.
      })
      .finally(() => {
        stopWatching();
        stopHearing();
      });
    return channel;
  }

  /**
   * A call on the 2.x client: its input rounds, then the result — or, when the server made a task
   * of it (MCP 2026-07-28 tasks extension), the task followed to its end (settling `channel`,
   * resolving `undefined`).
   */
  async #callModern(
    channel: ToolChannel,
    params: { name: string; arguments: Record<string, unknown>; _meta: Record<string, string> },
    callOptions: McpCallOptions,
    signal: AbortSignal,
    newRequest: () => void,
  ): Promise<unknown> {
    const input = {
      handler: this.#options.inputHandler,
      maxRounds: this.#options.maxInputRounds ?? 10,
      newRequest,
    };
    const outcome = await callWithInputRounds(
      this.#client,
      channel,
      this.name,
      params,
      callOptions,
      signal,
      input,
    );
    if (outcome.kind === 'result') return outcome.result;
    await followExtensionTask(this.#client, channel, this.name, outcome.task, signal, {
      ...this.#taskOptions(),
      input,
      rounds: outcome.rounds,
    });
    return undefined;
  }

  #taskOptions(): TaskCallOptions {
    const options: TaskCallOptions = {
      pollInterval: this.#options.taskPollInterval ?? 1000,
      minPollInterval: this.#options.taskMinPollInterval ?? 100,
      deadline: this.#options.taskDeadline ?? 3_600_000,
    };
    if (this.#options.taskTtl !== undefined) options.ttl = this.#options.taskTtl;
    return options;
  }

  async #runTask(
    channel: ToolChannel,
    params: { name: string; arguments: Record<string, unknown>; _meta: Record<string, string> },
    callOptions: McpCallOptions,
    signal: AbortSignal,
  ): Promise<void> {
    const api = taskApiOf(this.#client);
    if (api === undefined) {
      throw new TypeError(
        `MCP tool "${this.name}" runs as a task, and this client's SDK line has no task API ` +
          '(tasks need @modelcontextprotocol/sdk 1.x)',
      );
    }
    await runTaskCall(api, channel, this.name, params, callOptions, signal, this.#taskOptions());
  }

  /**
   * The tool's definition goes with every call on the 2.x client: the client mirrors arguments
   * into `Mcp-Param-*` headers as the definition's `x-mcp-header` marks say (SEP-2243), and it
   * reads definitions only from its own cached listing, which the first page asked for directly
   * (see `listPage`) does not fill. The definition goes without its `outputSchema`: the client
   * checks that on every answer, an `input_required` one too (which has no `structuredContent`
   * and so fails the call).
   */
  #roundOptions(callOptions: McpCallOptions): McpCallOptions {
    const definition =
      this.definition.outputSchema === undefined
        ? this.definition
        : { ...this.definition, outputSchema: undefined };
    return { ...callOptions, toolDefinition: definition };
  }

  /** The span attributes of one call, read as it starts (a session may begin after listing). */
  #attributes(): Record<string, ToolAttributeValue> {
    const transport = this.#client.transport as { sessionId?: unknown } | undefined;
    const attributes = mcpCallAttributes(
      this.#options.protocolVersion ?? protocolVersionOf(this.#client),
      transport?.sessionId,
      this.#options.networkTransport ?? networkTransportOf(transport),
    );
    const description = this.definition.description;
    if (typeof description === 'string' && description !== '') {
      attributes[ATTR_GEN_AI_TOOL_DESCRIPTION] = description;
    }
    return attributes;
  }
}

/** A progress notification's fraction: `progress/total` within 0..1, or -1 without a total. */
function fractionOf(progress: McpProgress): number {
  const { total } = progress;
  if (typeof total !== 'number' || !(total > 0) || !Number.isFinite(progress.progress)) return -1;
  return Math.min(1, Math.max(0, progress.progress / total));
}
