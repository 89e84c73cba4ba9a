import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { HostilePeer, toolDefinition } from './hostile-peer.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';

let harness: TracingHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

/** A server that never answers tools/call, or closes the connection when it comes. */
function silentServer(closeOnCall: boolean): HostilePeer {
  return new HostilePeer({
    pages: [[toolDefinition('hang')]],
    answer: (method, _params, peer) => {
      if (method === 'tools/call' && closeOnCall) void peer.transport.close();
      return undefined;
    },
  });
}

describe.each([
  ['1.x', () => new LegacyClient({ name: 'agent', version: '1.0.0' })],
  ['2.x', () => new ModernClient({ name: 'agent', version: '2.0.0' })],
])('mcpTools() against a server that hangs or goes away, %s client', (_line, makeClient) => {
  it.each([
    ['times out', false, '-32001'],
    ['closes the connection', true, '-32000'],
  ])('gives a call whose server %s the JSON-RPC code as error.type', async (_what, close, code) => {
    harness = await startTracingHarness({ register: true });
    const client = makeClient();
    await client.connect(silentServer(close).transport);
    const tools = await mcpTools(client, {
      requestOptions: { timeout: 200 },
    });
    attachTools(harness.bus, tools);

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'hang', arguments: {} });

    expect(result.error).not.toBe('');
    const span = await harness.span('execute_tool hang');
    expect(span.attributes).toMatchObject({
      'error.type': code,
      'rpc.response.status_code': code,
    });
    await client.close();
  });
});
