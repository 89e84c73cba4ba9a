import { metrics, type Attributes, type Histogram, type MeterProvider } from '@opentelemetry/api';
import type { ToolAttributes } from '../events/index.js';
import { VERSION } from '../version.js';
import {
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_NETWORK_TRANSPORT,
  ATTR_RPC_RESPONSE_STATUS_CODE,
} from './mcp-attribute-names.js';

/** The duration of a request as its sender saw it, from sending to the response (seconds). */
export const METRIC_MCP_CLIENT_OPERATION_DURATION = 'mcp.client.operation.duration';
/** The duration of a request as its receiver saw it, from receiving to the answer (seconds). */
export const METRIC_MCP_SERVER_OPERATION_DURATION = 'mcp.server.operation.duration';

/** The boundaries the MCP conventions advise for both operation durations, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
/** The span attributes a call carries that belong on its duration too (low cardinality). */
const CARRIED = [
  ATTR_MCP_METHOD_NAME,
  ATTR_NETWORK_TRANSPORT,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_RPC_RESPONSE_STATUS_CODE,
];

/** One side's `mcp.*.operation.duration` histogram. */
export class McpOperationMetrics {
  readonly #duration: Histogram;

  constructor(side: 'client' | 'server', provider: MeterProvider | undefined) {
    const meter = (provider ?? metrics.getMeterProvider()).getMeter('tooltrace', VERSION);
    this.#duration =
      side === 'client'
        ? meter.createHistogram(METRIC_MCP_CLIENT_OPERATION_DURATION, {
            description:
              'The duration of an MCP request as the client saw it, from sending it to the response.',
            unit: 's',
            advice: { explicitBucketBoundaries: DURATION_BUCKETS },
          })
        : meter.createHistogram(METRIC_MCP_SERVER_OPERATION_DURATION, {
            description:
              'The duration of an MCP request as the server saw it, from receiving it to the answer.',
            unit: 's',
            advice: { explicitBucketBoundaries: DURATION_BUCKETS },
          });
  }

  /** Starts timing one `tools/call`; the returned function records it once, however it ends. */
  start(toolName: string): (ending: McpOperationEnding) => void {
    const started = performance.now();
    let recorded = false;
    return (ending) => {
      if (recorded) return;
      recorded = true;
      const attributes: Attributes = {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': toolName,
      };
      for (const source of [ending.callAttributes, ending.attributes]) {
        for (const name of CARRIED) {
          const value = source?.[name];
          if (typeof value === 'string') attributes[name] = value;
        }
      }
      if (ending.errorType !== undefined) attributes['error.type'] = ending.errorType;
      this.#duration.record((performance.now() - started) / 1000, attributes);
    };
  }
}

/** How one operation ended, for its duration's attributes. */
export interface McpOperationEnding {
  /** The call's span attributes (`mcp.method.name`, `network.transport`, …). */
  callAttributes?: Readonly<ToolAttributes> | undefined;
  /** What the ending added (`rpc.response.status_code`). */
  attributes?: Readonly<ToolAttributes> | undefined;
  /** Set if and only if the operation failed. */
  errorType?: string | undefined;
}
