import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/bus/index.js';
import { mcpTools, type McpClient, type RefusedMcpTool } from '../../src/mcp/index.js';
import { StreamingToolPlugin } from '../../src/streamtool/index.js';
import { CheckedToolList } from '../../src/mcp/checked-tool-list.js';
import { callTool } from './mcp-harness.js';
import { HostilePeer, toolDefinition, type HostileScript } from './hostile-peer.js';

const warnings: string[] = [];
const logger: DiagLogger = {
  error: () => {},
  warn: (message) => void warnings.push(message),
  info: () => {},
  debug: () => {},
  verbose: () => {},
};

let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
  diag.disable();
  warnings.length = 0;
});

const LINES = [
  ['1.x', () => new LegacyClient({ name: 'agent', version: '1.0.0' }) as unknown as McpClient],
  ['2.x', () => new ModernClient({ name: 'agent', version: '2.0.0' }) as unknown as McpClient],
] as const;

async function connect(
  line: (typeof LINES)[number],
  script: HostileScript,
): Promise<{ client: McpClient; peer: HostilePeer }> {
  const peer = new HostilePeer({
    answer: (method) =>
      method === 'tools/call'
        ? { result: { content: [{ type: 'text', text: 'charged' }] } }
        : undefined,
    ...script,
  });
  const client = line[1]();
  await (client as unknown as { connect(transport: unknown): Promise<void> }).connect(
    peer.transport,
  );
  close = () => (client as unknown as { close(): Promise<void> }).close();
  return { client, peer };
}

describe.each(LINES)('mcpTools() against a hostile tool list, %s client', (...line) => {
  it('wires the README way without throwing, and one invoke of a doubled name sends one tools/call', async () => {
    diag.setLogger(logger, DiagLogLevel.WARN);
    const refused: RefusedMcpTool[] = [];
    const { client, peer } = await connect(line, {
      pages: [
        [
          toolDefinition('pay'),
          toolDefinition('pay', { description: 'the impostor' }),
          toolDefinition(''),
          toolDefinition('x'.repeat(300)),
          toolDefinition('line\nbreak'),
        ],
        [toolDefinition('pay'), toolDefinition('refund')],
      ],
    });

    const tools = await mcpTools(client, { onRefused: (list) => refused.push(...list) });
    const bus = new EventBus();
    for (const tool of tools) new StreamingToolPlugin(tool.name, () => tool).attach(bus);
    const result = await callTool(bus, { id: 'tc_1', name: 'pay', arguments: { cents: 100 } });

    expect(tools.map((tool) => tool.name)).toEqual(['pay', 'refund']);
    expect(result.error ?? '').toBe('');
    expect(peer.received('tools/call')).toHaveLength(1);
    expect(refused.map(({ index, reason }) => [index, reason])).toEqual([
      [1, 'duplicate name'],
      [2, 'empty name'],
      [3, 'name too long'],
      [4, 'name has control characters'],
      [5, 'duplicate name'],
    ]);
    expect(refused[2]!.name).toHaveLength(64);
    const diagnostics = warnings.filter((message) => message.includes('mcpTools refused'));
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toContain('refused 5 of the 7 tools the server listed');
    expect(diagnostics[0]).toContain('#2 "" (empty name)');
    expect(diagnostics[0]!.length).toBeLessThan(600);
  });

  it('takes at most maxTools and stops reading pages at maxPages', async () => {
    diag.setLogger(logger, DiagLogLevel.WARN);
    const { client, peer } = await connect(line, {
      pages: [[toolDefinition('a'), toolDefinition('b')], [toolDefinition('c')]],
      endlessPages: true,
    });

    const tools = await mcpTools(client, { maxPages: 3, maxTools: 2 });

    expect(tools.map((tool) => tool.name)).toEqual(['a', 'b']);
    expect(peer.received('tools/list')).toHaveLength(3);
    expect(warnings.join('\n')).toContain('#2 "c" (too many tools)');
  });
});

describe('CheckedToolList', () => {
  it('refuses entries that are not tools or whose input schema is not an object schema', () => {
    const checked = new CheckedToolList(10);
    const taken = [
      toolDefinition('ok'),
      { name: 'text', inputSchema: { type: 'string' } },
      { name: 'bare' },
      { name: 'list', inputSchema: [] },
      'tool',
      { name: 5, inputSchema: { type: 'object' } },
    ].map((entry) => checked.take(entry)?.name);

    expect(taken).toEqual(['ok', undefined, undefined, undefined, undefined, undefined]);
    expect(checked.refused.map((tool) => tool.reason)).toEqual([
      'input schema not an object schema',
      'input schema not an object schema',
      'input schema not an object schema',
      'not a tool object',
      'name not a string',
    ]);
    expect(checked.diagnostic()).toMatch(/^tooltrace: mcpTools refused 5 of the 6 tools/);
  });
});
