import type { Attributes } from '@opentelemetry/api';

/** `mcp.method.name`: a call that carries it is an MCP `tools/call` (OTel MCP conventions). */
const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
/** The attributes of a call's span that its MCP operation duration carries too (low cardinality). */
const CARRIED = [
  ATTR_MCP_METHOD_NAME,
  'network.transport',
  'mcp.protocol.version',
  'rpc.response.status_code',
];

/**
 * The MCP side of a tool call, for `mcp.client.operation.duration` or
 * `mcp.server.operation.duration`. The MCP adapters mark a call by `mcp.method.name`: a served
 * call on its `tool.invoke` (the call came in over MCP: the server's side), a call of an MCP
 * client's tool on its `tool.result` (the tool went out over MCP as it ran: the client's side).
 */
export class McpOperation {
  readonly side: 'client' | 'server';
  /** The carried attributes seen so far (`mcp.method.name`, `network.transport`, …). */
  readonly attributes: Attributes = {};

  constructor(side: 'client' | 'server') {
    this.side = side;
  }

  /**
   * The call's MCP operation after an invoke's (`server`) or a result's (`client`) attributes:
   * `current` with the carried ones added, a new one when these are the first to name the MCP
   * method, or `undefined` for a call that is not an MCP operation.
   */
  static note(
    current: McpOperation | undefined,
    attributes: unknown,
    side: 'client' | 'server',
  ): McpOperation | undefined {
    if (attributes === null || typeof attributes !== 'object') return current;
    const given = attributes as Record<string, unknown>;
    let operation = current;
    if (operation === undefined) {
      if (typeof given[ATTR_MCP_METHOD_NAME] !== 'string') return undefined;
      operation = new McpOperation(side);
    }
    for (const name of CARRIED) {
      const value = given[name];
      if (typeof value === 'string') operation.attributes[name] = value;
    }
    return operation;
  }
}
