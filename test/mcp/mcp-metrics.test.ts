import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { metrics } from '@opentelemetry/api';
import {
  DataPointType,
  MeterProvider,
  type HistogramMetricData,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { CollectedMetricReader } from '../../src/demo/collected-metric-reader.js';
import { TOOL_INVOKE } from '../../src/events/index.js';
import { mcpTools, serveMcpTools } from '../../src/mcp/index.js';
import { traceToolCalls, type ToolCallTracing } from '../../src/otel/index.js';
import type { ChannelTool, ToolEvent } from '../../src/streamtool/index.js';
import { attachTools, callTool, connectInMemory, resetGlobals } from './mcp-harness.js';

/** A real SDK reader that hands over what the instruments hold when asked. */
class PullReader extends CollectedMetricReader {
  async metric(name: string): Promise<MetricData | undefined> {
    const { resourceMetrics } = await this.collect();
    for (const scope of resourceMetrics.scopeMetrics) {
      const found = scope.metrics.find((metric) => metric.descriptor.name === name);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The histogram's points, as `{ attributes, count }`, once it holds `count` values. */
  async points(name: string, count: number): Promise<HistogramMetricData> {
    for (;;) {
      const metric = await this.metric(name);
      if (metric !== undefined) {
        const histogram = metric as HistogramMetricData;
        const total = histogram.dataPoints.reduce((sum, point) => sum + point.value.count, 0);
        if (total >= count) return histogram;
      }
      await nextTurn();
    }
  }
}

const providers: MeterProvider[] = [];
const tracings: ToolCallTracing[] = [];
let client: Client | undefined;
let taskStore: InMemoryTaskStore | undefined;

afterEach(async () => {
  // The store keeps a timer per task until its ttl; cleanup() clears them.
  taskStore?.cleanup();
  taskStore = undefined;
  await client?.close();
  client = undefined;
  await Promise.all(tracings.splice(0).map((tracing) => tracing.shutdown()));
  await Promise.all(providers.splice(0).map((provider) => provider.shutdown()));
  resetGlobals();
  metrics.disable();
});

function meter(): { provider: MeterProvider; reader: PullReader } {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  providers.push(provider);
  return { provider, reader };
}

const tools: ChannelTool[] = [
  {
    name: 'count',
    async *stream(): AsyncGenerator<ToolEvent> {
      await nextTurn();
      yield { kind: 'progress', progress: 0.5 };
      yield { kind: 'complete', payload: { files: 40 } };
    },
  },
  {
    name: 'broken',
    async *stream(): AsyncGenerator<ToolEvent> {
      await nextTurn();
      yield { kind: 'error', error: new Error('disk full'), errorType: 'disk_full' };
    },
  },
  {
    name: 'wait',
    stream(signal): AsyncIterable<ToolEvent> {
      return {
        async *[Symbol.asyncIterator](): AsyncGenerator<ToolEvent> {
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          yield { kind: 'complete', payload: 'too late' };
        },
      };
    },
  },
];

/** A bus traced by `traceToolCalls`, with `provider` as its meter provider when given. */
function tracedBus(provider?: MeterProvider): EventBus {
  const bus = new EventBus();
  tracings.push(traceToolCalls(bus, provider === undefined ? {} : { meterProvider: provider }));
  return bus;
}

function pointsOf(metric: HistogramMetricData): Record<string, Record<string, unknown>> {
  const byTool: Record<string, Record<string, unknown>> = {};
  for (const point of metric.dataPoints) {
    byTool[String(point.attributes['gen_ai.tool.name'])] = {
      ...point.attributes,
      count: point.value.count,
    };
  }
  return byTool;
}

describe('MCP operation metrics', () => {
  it("records mcp.client.operation.duration and mcp.server.operation.duration per tools/call through the tracer's meterProvider, once each: completed, failed, cancelled", async () => {
    const server = meter();
    const clientSide = meter();
    const mcpServer = new McpServer({ name: 'files', version: '1.0.0' });
    serveMcpTools(mcpServer, tools, { bus: tracedBus(server.provider) });
    client = await connectInMemory(mcpServer);
    const bus = tracedBus(clientSide.provider);
    const plugins = attachTools(bus, await mcpTools(client, { protocolVersion: '2025-11-25' }));

    await callTool(bus, { id: 'tc_1', name: 'count', arguments: {} });
    await callTool(bus, { id: 'tc_2', name: 'broken', arguments: {} });
    bus.emit(TOOL_INVOKE, { id: 'tc_3', name: 'wait', arguments: {} });
    await nextTurn();
    await nextTurn();
    await Promise.all(plugins.map((plugin) => plugin.shutdown()));

    const clientMetric = await clientSide.reader.points('mcp.client.operation.duration', 3);
    expect(clientMetric.descriptor).toMatchObject({ unit: 's' });
    expect(clientMetric.dataPointType).toBe(DataPointType.HISTOGRAM);
    const common = {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      count: 1,
    };
    expect(pointsOf(clientMetric)).toEqual({
      count: { ...common, 'gen_ai.tool.name': 'count', 'mcp.protocol.version': '2025-11-25' },
      broken: {
        ...common,
        'gen_ai.tool.name': 'broken',
        'mcp.protocol.version': '2025-11-25',
        'error.type': 'tool_error',
      },
      wait: {
        ...common,
        'gen_ai.tool.name': 'wait',
        'mcp.protocol.version': '2025-11-25',
        'error.type': 'cancelled',
      },
    });
    // The boundaries the MCP conventions advise, from 10 ms to 5 minutes.
    expect(clientMetric.dataPoints[0]!.value.buckets.boundaries).toEqual([
      0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
    ]);
    for (const point of clientMetric.dataPoints) {
      expect(point.value.sum).toBeGreaterThan(0);
      expect(point.value.sum).toBeLessThan(5);
    }

    const serverMetric = await server.reader.points('mcp.server.operation.duration', 3);
    expect(serverMetric.descriptor).toMatchObject({ unit: 's' });
    expect(pointsOf(serverMetric)).toEqual({
      count: { ...common, 'gen_ai.tool.name': 'count' },
      // The tool's own kind of failure, as its error event named it.
      broken: { ...common, 'gen_ai.tool.name': 'broken', 'error.type': 'disk_full' },
      wait: { ...common, 'gen_ai.tool.name': 'wait', 'error.type': 'cancelled' },
    });
    expect(serverMetric.dataPoints[0]!.value.buckets.boundaries).toHaveLength(14);
  });

  it('records a JSON-RPC error with its code as error.type and rpc.response.status_code', async () => {
    const clientSide = meter();
    const server = new Server(
      { name: 'strict', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: 'strict', inputSchema: { type: 'object' } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, () => {
      throw new McpError(ErrorCode.InvalidParams, 'path is required');
    });
    client = await connectInMemory(server);
    const bus = tracedBus(clientSide.provider);
    attachTools(bus, await mcpTools(client));

    const result = await callTool(bus, { id: 'tc_1', name: 'strict', arguments: {} });

    expect(result.errorType).toBe('-32602');
    const metric = await clientSide.reader.points('mcp.client.operation.duration', 1);
    expect(pointsOf(metric)).toEqual({
      strict: {
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'strict',
        'error.type': '-32602',
        'rpc.response.status_code': '-32602',
        count: 1,
      },
    });
  });

  it('records a task call once, from tools/call to its result, on both sides', async () => {
    const server = meter();
    const clientSide = meter();
    const mcpServer = new McpServer(
      { name: 'research', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: (taskStore = new InMemoryTaskStore()),
      },
    );
    serveMcpTools(mcpServer, [{ tool: tools[0]!, execution: { taskSupport: 'required' } }], {
      bus: tracedBus(server.provider),
      taskPollInterval: 10,
    });
    client = await connectInMemory(mcpServer);
    const bus = tracedBus(clientSide.provider);
    const listed = await mcpTools(client);
    expect(listed.map((tool) => tool.runsAsTask)).toEqual([true]);
    attachTools(bus, listed);

    const result = await callTool(bus, { id: 'tc_1', name: 'count', arguments: {} });

    expect(result.error).toBeUndefined();
    const clientMetric = await clientSide.reader.points('mcp.client.operation.duration', 1);
    const serverMetric = await server.reader.points('mcp.server.operation.duration', 1);
    expect(pointsOf(clientMetric)).toEqual({
      count: {
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'count',
        count: 1,
      },
    });
    expect(pointsOf(serverMetric).count).toMatchObject({ count: 1 });
    expect(pointsOf(serverMetric).count!['error.type']).toBeUndefined();
  });

  it("records on the global meter provider by default, as the tracer's other metrics", async () => {
    const global = meter();
    metrics.setGlobalMeterProvider(global.provider);
    const mcpServer = new McpServer({ name: 'files', version: '1.0.0' });
    serveMcpTools(mcpServer, tools, { bus: tracedBus() });
    client = await connectInMemory(mcpServer);
    const bus = tracedBus();
    attachTools(bus, await mcpTools(client));

    await callTool(bus, { id: 'tc_1', name: 'count', arguments: {} });

    const clientMetric = await global.reader.points('mcp.client.operation.duration', 1);
    const serverMetric = await global.reader.points('mcp.server.operation.duration', 1);
    expect(pointsOf(clientMetric).count).toMatchObject({ count: 1 });
    expect(pointsOf(serverMetric).count).toMatchObject({ count: 1 });
  });
});
