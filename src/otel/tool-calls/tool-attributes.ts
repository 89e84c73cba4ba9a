import type { Attributes, AttributeValue } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
} from '../attribute-names.js';
import type { AttributeTarget } from '../attribute-target.js';

/**
 * The keys a tool's own attributes never set: the tracer's identity of the call, its outcome
 * and its `tooltrace.*` bookkeeping, so a tool cannot make its span lie about what it is. The
 * `tooltrace.mcp.*` keys are the MCP adapter's (a task's id and status), which the tracer never
 * writes itself.
 */
const RESERVED = new Set([
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_ERROR_TYPE,
]);

/** The one part of the `tooltrace.` namespace a tool's attributes may write: the MCP adapter's. */
const ADAPTER_PREFIX = 'tooltrace.mcp.';

/**
 * Writes the span attributes a `tool.invoke` or `tool.result` carries (`attributes`) into
 * `target`, leaving out reserved keys, keys `skip` already holds, and values an attribute cannot
 * hold (the payload may come from a journal line, not from bridge's checked events).
 */
export function writeToolAttributes(
  target: AttributeTarget,
  attributes: unknown,
  skip?: Attributes,
): void {
  if (attributes === null || typeof attributes !== 'object') return;
  for (const [key, value] of Object.entries(attributes)) {
    if (RESERVED.has(key) || (key.startsWith('tooltrace.') && !key.startsWith(ADAPTER_PREFIX))) {
      continue;
    }
    if (skip !== undefined && skip[key] !== undefined) continue;
    if (isAttributeValue(value)) target.setAttribute(key, value);
  }
}

function isAttributeValue(value: unknown): value is AttributeValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    default:
      return (
        Array.isArray(value) &&
        value.every((item: unknown) => {
          const kind = typeof item;
          return (
            kind === 'string' || kind === 'boolean' || (kind === 'number' && Number.isFinite(item))
          );
        })
      );
  }
}
