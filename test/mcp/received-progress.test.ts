import { setImmediate as nextTurn } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { TOOL_STREAM_PROGRESS } from '../../src/events/index.js';
import { mcpTools } from '../../src/mcp/index.js';
import { RecordingSubscriber } from '../../src/testing/index.js';
import { attachTools, callTool } from './mcp-harness.js';

/**
 * A client transport that hands the client what the server sent in batches, every message of a
 * batch in one synchronous loop, as the SDK's stdio transport does with the lines of one read
 * when the machine is busy and several arrive together.
 */
class BatchingTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #inner: InMemoryTransport;
  readonly #queued: JSONRPCMessage[] = [];

  constructor(inner: InMemoryTransport) {
    this.#inner = inner;
    inner.onmessage = (message) => {
      this.#queued.push(message);
      if (this.#queued.length === 1) setImmediate(() => this.#flush());
    };
    inner.onclose = () => this.onclose?.();
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#inner.send(message);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #flush(): void {
    for (const message of this.#queued.splice(0)) this.onmessage?.(message);
  }
}

/** A server written with the SDK alone: a tool that reports progress 1..5 of 5, then answers. */
function countingServer(): McpServer {
  const server = new McpServer({ name: 'counting', version: '1.0.0' });
  server.registerTool('count', { description: 'counts to five' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    for (let step = 1; step <= 5; step += 1) {
      if (progressToken === undefined) break;
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: step, total: 5, message: `step ${step}` },
      });
    }
    return { content: [{ type: 'text', text: 'counted' }] };
  });
  return server;
}

describe('mcpTools progress when notifications and the result arrive together', () => {
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  it('puts every progress notification on the bus, in order, before the result', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = countingServer();
    client = new Client({ name: 'tooltrace-test', version: '1.0.0' });
    await Promise.all([
      server.connect(serverSide),
      client.connect(new BatchingTransport(clientSide)),
    ]);
    const bus = new EventBus();
    const recording = new RecordingSubscriber(bus);
    attachTools(bus, await mcpTools(client));

    const result = await callTool(bus, { id: 'tc_1', name: 'count', arguments: {} });
    await nextTurn();

    expect(result.error).toBeFalsy();
    const progress = recording.events
      .filter((event) => event.type === TOOL_STREAM_PROGRESS)
      .map((event) => (event.payload as { progress: number; payload?: unknown }).progress);
    // The SDK alone hears only what arrived before the result's batch: here, none of it.
    expect(progress).toEqual([0.2, 0.4, 0.6, 0.8, 1]);
  });
});
