import { DataPointType, MeterProvider } from '@opentelemetry/sdk-metrics';
import { CollectedMetricReader } from '../../src/demo/collected-metric-reader.js';
import { AgentMetrics } from '../../src/otel/agent-metrics.js';
import { McpOperation } from '../../src/otel/tool-calls/mcp-operation.js';
import { SidecarMetrics } from '../../src/sidecar/pipeline/sidecar-metrics.js';

/** How an instrument's points reach a backend: what Prometheus makes of them depends on it. */
export type InstrumentKind = 'histogram' | 'counter' | 'gauge';

/** One OpenTelemetry instrument tooltrace emits, as its collected points describe it. */
export interface EmittedInstrument {
  /** The OpenTelemetry name: `gen_ai.execute_tool.duration`. */
  name: string;
  /** The UCUM unit: `s`, `{event}`. */
  unit: string;
  /**
   * `histogram`; `counter` for a monotonic sum; `gauge` for a gauge or a non-monotonic sum
   * (an up-down counter), which Prometheus stores as a gauge.
   */
  kind: InstrumentKind;
  /** Every attribute key any of its points carried, sorted. */
  attributes: string[];
}

/**
 * Every instrument the library and the sidecar record, read from a real MeterProvider after
 * driving the code that records them: {@link AgentMetrics} through each of its methods with
 * every optional attribute present (a failed call with an agent name, a streamed call, a turn,
 * a model call with both token kinds, an MCP `tools/call` on each side, the drop counters), and {@link SidecarMetrics.observe} with a source and a dropped batch. So the
 * names, units, kinds and attribute keys are the ones the source really emits, not a copy.
 */
export async function emittedInstruments(): Promise<EmittedInstrument[]> {
  const reader = new CollectedMetricReader();
  const provider = new MeterProvider({ readers: [reader] });
  try {
    const agent = new AgentMetrics(provider);
    const start = 1_000_000_000n;
    agent.callStarted('search');
    agent.callEnded(
      {
        toolName: 'search',
        agentName: 'agent',
        startUnixNano: start,
        endUnixNano: start + 2_000_000_000n,
        errorType: 'cancelled',
        firstPartialUnixNano: start + 500_000_000n,
        streamEvents: 3,
      },
      'result',
      'search',
    );
    // An MCP tools/call on each side, as the MCP adapters mark them (see McpOperation).
    const mcpAttributes = { 'mcp.method.name': 'tools/call', 'network.transport': 'pipe' };
    for (const side of ['client', 'server'] as const) {
      agent.mcpCallEnded(
        {
          toolName: 'search',
          agentName: '',
          startUnixNano: start,
          endUnixNano: start + 1_000_000_000n,
          errorType: 'tool_error',
          firstPartialUnixNano: undefined,
          streamEvents: 0,
        },
        McpOperation.note(undefined, mcpAttributes, side)!,
        'result',
      );
    }
    agent.observeDrops(() => ({ late: 1, duplicate: 0 }));
    agent.agentEnded('agent', start, start + 3_000_000_000n, '_OTHER', 'result');
    agent.chatEnded(
      {
        agentName: 'agent',
        requestModel: 'model-a',
        responseModel: 'model-a-1',
        startUnixNano: start,
        endUnixNano: start + 1_000_000_000n,
        errorType: '_OTHER',
        inputTokens: 10,
        outputTokens: 20,
      },
      'result',
    );

    const sidecar = new SidecarMetrics();
    sidecar.received('http');
    // Spans dropped are counted by status: there is a series only once one was.
    sidecar.dropped('404', 1);
    sidecar.setGauges({ openSpans: () => 1, queueDepth: () => 2, pinnedCalls: () => 0 });
    sidecar.observe(provider.getMeter('tooltrace-sidecar'));

    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw new AggregateError(errors, 'collecting the metrics failed');
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .map((metric) => {
        const attributes = new Set<string>();
        for (const point of metric.dataPoints) {
          for (const key of Object.keys(point.attributes)) attributes.add(key);
        }
        return {
          name: metric.descriptor.name,
          unit: metric.descriptor.unit,
          kind: kindOf(metric.dataPointType, 'isMonotonic' in metric && metric.isMonotonic),
          attributes: [...attributes].sort(),
        };
      })
      .sort((left, right) => left.name.localeCompare(right.name));
  } finally {
    await provider.shutdown();
  }
}

function kindOf(type: DataPointType, monotonic: boolean): InstrumentKind {
  switch (type) {
    case DataPointType.HISTOGRAM:
      return 'histogram';
    case DataPointType.SUM:
      return monotonic ? 'counter' : 'gauge';
    case DataPointType.GAUGE:
      return 'gauge';
    default:
      throw new Error(`no Prometheus mapping in this test for data point type ${type}`);
  }
}
