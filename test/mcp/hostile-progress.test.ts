import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/index.js';
import { startTracingHarness, type TracingHarness } from '../otel/tracing-harness.js';
import { HostilePeer, toolDefinition } from './hostile-peer.js';
import { attachTools, callTool, resetGlobals } from './mcp-harness.js';

let harness: TracingHarness | undefined;
let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
  await harness?.close();
  harness = undefined;
  resetGlobals();
});

const BURST = 2_000;

/** A server that answers tools/call with a burst of progress, then the result, in one go. */
function burstingServer(): HostilePeer {
  return new HostilePeer({
    pages: [[toolDefinition('index')]],
    answer: (method, params, peer) => {
      if (method !== 'tools/call') return undefined;
      const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
      for (let step = 1; step <= BURST; step += 1) {
        peer.send({
          method: 'notifications/progress',
          params: { progressToken: token, progress: step, total: BURST },
        });
      }
      return { result: { content: [{ type: 'text', text: 'indexed' }] } };
    },
  });
}

describe('mcpTools() against a server whose progress messages are huge', () => {
  it('keeps 4096 characters of each', async () => {
    harness = await startTracingHarness({ register: true });
    const peer = new HostilePeer({
      pages: [[toolDefinition('index')]],
      answer: (method, params, server) => {
        if (method !== 'tools/call') return undefined;
        const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
        server.send({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1, message: 'm'.repeat(5_000_000) },
        });
        return { result: { content: [] } };
      },
    });
    const client = new LegacyClient({ name: 'agent', version: '1.0.0' });
    await client.connect(peer.transport);
    close = () => client.close();
    const events: unknown[] = [];
    harness.bus.subscribe('tool.stream.progress', (event) => void events.push(event.payload));
    attachTools(harness.bus, await mcpTools(client));

    await callTool(harness.bus, { id: 'tc_1', name: 'index', arguments: {} });

    expect(events).toHaveLength(1);
    const message = (events[0] as { payload: string }).payload;
    expect(message).toHaveLength(4096);
    expect(message.endsWith('…')).toBe(true);
  });
});

describe.each([
  ['1.x', () => new LegacyClient({ name: 'agent', version: '1.0.0' })],
  ['2.x', () => new ModernClient({ name: 'agent', version: '2.0.0' })],
])('mcpTools() against a progress burst, %s client', (_line, makeClient) => {
  it('keeps the newest value and counts what it let go, on the span and in stats()', async () => {
    harness = await startTracingHarness({ register: true });
    const peer = burstingServer();
    const client = makeClient();
    await client.connect(peer.transport);
    close = () => client.close();
    attachTools(harness.bus, await mcpTools(client));

    const result = await callTool(harness.bus, { id: 'tc_1', name: 'index', arguments: {} });

    expect(result.error ?? '').toBe('');
    const span = await harness.span('execute_tool index');
    const dropped = span.attributes['tooltrace.stream.events.dropped'];
    const received = span.attributes['tooltrace.stream.progress.count'];
    expect(span.attributes['tooltrace.stream.last_progress']).toBe(1);
    expect(typeof dropped).toBe('number');
    expect((dropped as number) + (received as number)).toBe(BURST);
    expect(harness.tracing.stats().streamEventsDropped).toBe(dropped);
  });
});
