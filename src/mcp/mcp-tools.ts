import { context, diag, propagation } from '@opentelemetry/api';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolAttributeValue } from '../events/index.js';
import { ChannelFullError } from '../errors/index.js';
import type { ChannelTool } from '../streamtool/index.js';
import { ToolChannel } from '../streamtool/index.js';
import {
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
  ATTR_NETWORK_TRANSPORT,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ERROR_TYPE_TOOL_ERROR,
  METHOD_TOOLS_CALL,
} from './mcp-attribute-names.js';
import { McpToolError } from './mcp-tool-error.js';
import { networkTransportOf } from './network-transport.js';

/** Options for {@link mcpTools}. */
export interface McpToolsOptions {
  /**
   * `network.transport` of every call.
   * @default `pipe` for a stdio transport, `tcp` for the HTTP ones, none for others
   */
  networkTransport?: string;
  /**
   * `mcp.protocol.version` of every call. The SDK's client keeps the negotiated version to
   * itself unless its transport is HTTP, so give it for stdio when you want it on spans.
   * @default the transport's `protocolVersion`, when it has one
   */
  protocolVersion?: string;
  /** Options for each `tools/call` request (`timeout`, `resetTimeoutOnProgress`, …). */
  requestOptions?: Omit<RequestOptions, 'signal' | 'onprogress'>;
  /**
   * The most pages of `tools/list` read; a server that keeps answering with a cursor stops there.
   * @default 100
   */
  maxPages?: number;
}

/** A tool an MCP server lists, as a {@link ChannelTool}; its definition as the server gave it. */
export interface McpChannelTool extends ChannelTool {
  /** The tool's definition from `tools/list` (description, input schema, annotations). */
  readonly definition: Tool;
}

/** How many progress notifications a call holds for bridge before dropping further ones. */
const CHANNEL_CAPACITY = 64;

/**
 * The tools `client` lists (every page of `tools/list`), each as a {@link ChannelTool} named as
 * the server names it. A call sends `tools/call` with a progress token: each progress
 * notification becomes a `progress` event (the fraction `progress/total` when `total` is known,
 * else unknown; its `message` as the payload); the result's `content` (and `structuredContent`)
 * the `complete` payload; `isError` an `error` ({@link McpToolError}, `error.type=tool_error`); a
 * JSON-RPC error an `error` with its code as `error.type`. The call's signal cancels the request.
 * The request carries the active OpenTelemetry context in `params._meta` through the configured
 * propagators, so a server that reads it joins the trace under the call's `execute_tool` span,
 * and the span gets the MCP attributes (`mcp.method.name`, `jsonrpc.request.id`,
 * `network.transport`, `mcp.session.id` and `mcp.protocol.version` when known) and the tool's
 * description.
 */
export async function mcpTools(
  client: Client,
  options: McpToolsOptions = {},
): Promise<McpChannelTool[]> {
  if (client === null || typeof client !== 'object' || typeof client.callTool !== 'function') {
    throw new TypeError('client must be a connected MCP Client');
  }
  const maxPages = options.maxPages ?? 100;
  const tools: McpChannelTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page += 1) {
    const listed = await client.listTools(cursor === undefined ? undefined : { cursor });
    for (const definition of listed.tools) tools.push(new McpTool(client, definition, options));
    cursor = listed.nextCursor;
    // A cursor seen before would list the same pages again.
    if (cursor === undefined || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return tools;
}

/** One listed tool: each `stream()` is one `tools/call`. */
class McpTool implements McpChannelTool {
  readonly name: string;
  readonly definition: Tool;
  readonly #client: Client;
  readonly #options: McpToolsOptions;

  constructor(client: Client, definition: Tool, options: McpToolsOptions) {
    this.name = definition.name;
    this.definition = definition;
    this.#client = client;
    this.#options = options;
  }

  stream(signal: AbortSignal, input: Record<string, unknown>): ToolChannel {
    const channel = new ToolChannel({ capacity: CHANNEL_CAPACITY });
    const meta: Record<string, string> = {};
    propagation.inject(context.active(), meta);
    const attributes = this.#attributes();
    let dropped = 0;
    const onprogress = (progress: Progress): void => {
      try {
        void channel.progress(fractionOf(progress), progress.message);
      } catch (error) {
        // Notifications cannot be slowed down: past the buffer they are counted and dropped.
        if (!(error instanceof ChannelFullError)) return;
        if (dropped++ === 0) {
          diag.warn(`tooltrace: MCP tool "${this.name}" sent progress faster than it was read`);
        }
      }
    };
    this.#client
      .callTool({ name: this.name, arguments: input, _meta: meta }, undefined, {
        ...this.#options.requestOptions,
        signal,
        onprogress,
      })
      .then(
        (result) => settle(channel, this.name, result as CallToolResult, attributes),
        (error: unknown) => {
          // A cancelled call already has its result (bridge answered the abort).
          if (signal.aborted) return channel.close();
          const code = (error as { code?: unknown } | null)?.code;
          if (typeof code !== 'number') return channel.fail(error, { attributes });
          const status = String(code);
          return channel.fail(error, {
            errorType: status,
            attributes: { ...attributes, [ATTR_RPC_RESPONSE_STATUS_CODE]: status },
          });
        },
      )
      .catch(() => {
        // The channel was closed by its reader (the call ended first): nothing is left to tell.
      });
    return channel;
  }

  /** The span attributes of one call, read as it starts (a session may begin after listing). */
  #attributes(): Record<string, ToolAttributeValue> {
    const attributes: Record<string, ToolAttributeValue> = {
      [ATTR_MCP_METHOD_NAME]: METHOD_TOOLS_CALL,
    };
    const transport = this.#client.transport as
      { sessionId?: unknown; protocolVersion?: unknown } | undefined;
    const requestId = nextRequestId(this.#client);
    if (requestId !== undefined) attributes[ATTR_JSONRPC_REQUEST_ID] = requestId;
    const network = this.#options.networkTransport ?? networkTransportOf(transport);
    if (network !== undefined) attributes[ATTR_NETWORK_TRANSPORT] = network;
    if (typeof transport?.sessionId === 'string') {
      attributes[ATTR_MCP_SESSION_ID] = transport.sessionId;
    }
    const version = this.#options.protocolVersion ?? transport?.protocolVersion;
    if (typeof version === 'string') attributes[ATTR_MCP_PROTOCOL_VERSION] = version;
    const description = this.definition.description;
    if (typeof description === 'string' && description !== '') {
      attributes[ATTR_GEN_AI_TOOL_DESCRIPTION] = description;
    }
    return attributes;
  }
}

/** Ends the call's channel with what the server answered. */
function settle(
  channel: ToolChannel,
  toolName: string,
  result: CallToolResult,
  attributes: Record<string, ToolAttributeValue>,
): Promise<void> {
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.isError === true) {
    return channel.fail(new McpToolError(toolName, content), {
      errorType: ERROR_TYPE_TOOL_ERROR,
      attributes,
    });
  }
  const payload: { content: unknown[]; structuredContent?: unknown } = { content };
  if (result.structuredContent !== undefined) payload.structuredContent = result.structuredContent;
  return channel.complete(payload, { attributes });
}

/** A progress notification's fraction: `progress/total` within 0..1, or -1 without a total. */
function fractionOf(progress: Progress): number {
  const { total } = progress;
  if (typeof total !== 'number' || !(total > 0) || !Number.isFinite(progress.progress)) return -1;
  return Math.min(1, Math.max(0, progress.progress / total));
}

/**
 * The JSON-RPC id the client gives its next request. The SDK assigns ids from a counter and
 * tells no one; `callTool` takes the next one synchronously, before its first `await`, so the
 * counter read just before the call is the call's id. `undefined` if the SDK stops keeping it.
 */
function nextRequestId(client: Client): string | undefined {
  const counter = (client as unknown as { _requestMessageId?: unknown })._requestMessageId;
  return typeof counter === 'number' ? String(counter) : undefined;
}
