import type { ToolAttributeValue } from '../events/index.js';
import {
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
  ATTR_NETWORK_TRANSPORT,
  METHOD_TOOLS_CALL,
} from './mcp-attribute-names.js';

/** The first MCP revision without sessions: stateless requests, `input_required`, tasks as an extension. */
export const STATELESS_PROTOCOL_VERSION = '2026-07-28';

/**
 * The MCP conventions' attributes of one `tools/call`, on either side: the method, the protocol
 * version and network transport when known, and the session id but on MCP 2026-07-28 or later,
 * where the OpenTelemetry MCP conventions say `mcp.session.id` must not be set (revisions are
 * dates, so they compare as strings).
 */
export function mcpCallAttributes(
  version: string | undefined,
  sessionId: unknown,
  network: string | undefined,
): Record<string, ToolAttributeValue> {
  const attributes: Record<string, ToolAttributeValue> = {
    [ATTR_MCP_METHOD_NAME]: METHOD_TOOLS_CALL,
  };
  if (network !== undefined) attributes[ATTR_NETWORK_TRANSPORT] = network;
  if (version !== undefined) attributes[ATTR_MCP_PROTOCOL_VERSION] = version;
  const stateless = version !== undefined && version >= STATELESS_PROTOCOL_VERSION;
  if (typeof sessionId === 'string' && !stateless) attributes[ATTR_MCP_SESSION_ID] = sessionId;
  return attributes;
}
