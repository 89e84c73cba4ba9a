/** The first MCP revision without sessions: stateless requests, `input_required`, tasks as an extension. */
export const STATELESS_PROTOCOL_VERSION = '2026-07-28';

/**
 * Whether `version` is MCP 2026-07-28 or later, where the OpenTelemetry MCP conventions say
 * `mcp.session.id` must not be set (revisions are dates, so they compare as strings).
 */
export function isStatelessVersion(version: string | undefined): boolean {
  return version !== undefined && version >= STATELESS_PROTOCOL_VERSION;
}
