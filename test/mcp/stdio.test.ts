import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/index.js';
import { ROOT } from '../demo/cli-process.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';

const SERVER = join(ROOT, 'test/fixtures/mcp/stdio-server.ts');

let harness: TracingHarness | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

describe('MCP over stdio, across two processes', () => {
  it('gives one trace: the client execute_tool span with the stream as progress, the served call under it with its own stream', async () => {
    harness = await startTracingHarness({ register: true });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', SERVER],
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: harness.receiver.url },
      stderr: 'inherit',
    });
    client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(transport);
    attachTools(harness.bus, await mcpTools(client));

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'count_files',
      arguments: { folder: 'src' },
    });

    expect(JSON.parse(result.output)).toEqual({
      content: [{ type: 'text', text: '{"folder":"src","files":40}' }],
      structuredContent: { folder: 'src', files: 40 },
    });
    // The server exports its span as it ends, the client's on flush: both reach one receiver.
    const spans = await harness.spans(2);
    const clientSpan = spans.find((span) => span.resource['service.name'] === 'tooltrace-test')!;
    const serverSpan = spans.find((span) => span.resource['service.name'] === 'mcp-server')!;
    expect(clientSpan.name).toBe('execute_tool count_files');
    expect(serverSpan.name).toBe('execute_tool count_files');
    expect(serverSpan.traceId).toBe(clientSpan.traceId);
    expect(serverSpan.parentSpanId).toBe(clientSpan.spanId);

    const named = (span: typeof clientSpan, name: string) =>
      span.events.filter((event) => event.name === name);
    // The client sees six progress notifications: four progress events and two partials.
    expect(named(clientSpan, 'tool.stream.progress')).toHaveLength(6);
    expect(named(serverSpan, 'tool.stream.progress')).toHaveLength(4);
    expect(named(serverSpan, 'tool.stream.partial')).toHaveLength(2);
    expect(clientSpan.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'network.transport': 'pipe',
      'gen_ai.tool.description': 'Counts the files in a folder',
    });
    expect(serverSpan.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'network.transport': 'pipe',
      'jsonrpc.request.id': clientSpan.attributes['jsonrpc.request.id'],
    });
  });
});
