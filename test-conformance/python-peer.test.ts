import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_STREAM_PROGRESS, type ToolStreamProgress } from '../src/events/index.js';
import { mcpTools } from '../src/mcp/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../src/testing/index.js';
import { ROOT } from '../test/demo/cli-process.js';
import { startTracingHarness, type TracingHarness } from '../test/otel/tracing-harness.js';
import { attachTools, callTool } from '../test/mcp/mcp-harness.js';

/**
 * The Python interpreter of `scripts/python-peer.sh`'s venv (the `mcp` SDK from PyPI), set by
 * `npm run test:conformance`. Missing, the test fails saying so: it is never skipped.
 */
const PYTHON = process.env.MCP_PYTHON_PEER;

let harness: TracingHarness | undefined;
let receiver: OtlpReceiver | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await harness?.close();
  harness = undefined;
  await receiver?.close();
  receiver = undefined;
});

describe('mcpTools() against a Python MCP server (mcp 2.3 from PyPI) over stdio', () => {
  it.each([
    ['accepts', { action: 'accept', content: { ok: true } }, 'deleted 40 files in tmp'],
    ['declines', { action: 'decline' }, undefined],
  ] as const)(
    'speaks MCP 2026-07-28: its input_required question answered by the inputHandler (the user %s), one span',
    async (_, answer, text) => {
      if (PYTHON === undefined)
        throw new Error('MCP_PYTHON_PEER is not set: run npm run test:conformance');
      receiver = await startOtlpReceiver();
      harness = await startTracingHarness({ receiver });
      client = new Client(
        { name: 'agent', version: '2.0.0' },
        { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(
        new StdioClientTransport({
          command: PYTHON,
          args: [join(ROOT, 'test-conformance/python/files_server.py')],
          stderr: 'ignore',
        }),
      );
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const questions: string[] = [];
      attachTools(
        harness.bus,
        await mcpTools(client, {
          inputHandler: (question) => {
            questions.push(`${question.method}: ${String(question.params?.message)}`);
            return answer;
          },
        }),
      );

      const result = await callTool(harness.bus, {
        id: 'tc_1',
        name: 'delete_files',
        arguments: { folder: 'tmp' },
      });

      expect(questions).toEqual(['elicitation/create: Delete the 40 files in tmp?']);
      if (text === undefined) {
        // The Python SDK aborts a call whose confirmation was declined.
        expect(result.error).toBeDefined();
      } else {
        expect(result.error).toBeUndefined();
        expect(JSON.parse(result.output)).toMatchObject({ content: [{ type: 'text', text }] });
      }
      const [span] = await harness.spans(1);
      expect(span!.name).toBe('execute_tool delete_files');
      expect(span!.attributes).toMatchObject({
        'mcp.protocol.version': '2026-07-28',
        'network.transport': 'pipe',
        'tooltrace.mcp.input.rounds': 1,
      });
      expect(
        span!.events
          .filter((event) => event.attributes['tooltrace.mcp.input.status'] !== undefined)
          .map((event) => event.attributes['tooltrace.mcp.input.status']),
      ).toEqual(['requested', answer.action === 'accept' ? 'accepted' : 'declined']);
    },
  );
});

describe('mcpTools() against a FastMCP task server (fastmcp 4.1.4 + fastmcp-tasks, from PyPI) over stdio', () => {
  it('follows its MCP 2026-07-28 task to the end: status messages as progress, its question answered with tasks/update, one span', async () => {
    if (PYTHON === undefined)
      throw new Error('MCP_PYTHON_PEER is not set: run npm run test:conformance');
    receiver = await startOtlpReceiver();
    harness = await startTracingHarness({ receiver });
    client = new Client(
      { name: 'agent', version: '2.0.0' },
      {
        capabilities: {
          elicitation: {},
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
        versionNegotiation: { mode: 'auto' },
      },
    );
    await client.connect(
      new StdioClientTransport({
        command: PYTHON,
        args: [join(ROOT, 'test-conformance/python/fastmcp_tasks_server.py')],
        stderr: 'ignore',
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const questions: string[] = [];
    attachTools(
      harness.bus,
      await mcpTools(client, {
        taskMinPollInterval: 50,
        inputHandler: (question) => {
          questions.push(`${question.method}: ${String(question.params?.message)}`);
          return { action: 'accept', content: { go_on: true } };
        },
      }),
    );
    const messages: unknown[] = [];
    harness.bus.subscribe<ToolStreamProgress>(TOOL_STREAM_PROGRESS, (event) => {
      const payload = event.payload.payload as { statusMessage?: unknown } | undefined;
      if (payload?.statusMessage !== undefined) messages.push(payload.statusMessage);
    });

    const result = await callTool(harness.bus, {
      id: 'tc_1',
      name: 'index_folder',
      arguments: { folder: 'tmp' },
    });

    expect(result.error).toBeUndefined();
    expect(JSON.parse(result.output)).toMatchObject({
      content: [{ type: 'text', text: 'indexed 12 files in tmp' }],
    });
    expect(questions).toEqual(['elicitation/create: Index the rest of tmp?']);
    expect(messages).toEqual(['indexed half of tmp', 'indexed all of tmp']);
    const [span] = await harness.spans(1);
    expect(span!.name).toBe('execute_tool index_folder');
    expect(span!.attributes).toMatchObject({
      'mcp.protocol.version': '2026-07-28',
      'tooltrace.mcp.task.status': 'completed',
      'tooltrace.mcp.task.input_required': true,
      'tooltrace.mcp.input.rounds': 1,
    });
    expect(span!.attributes['tooltrace.mcp.task.id']).toEqual(expect.any(String));
    expect(span!.attributes['tooltrace.mcp.task.polls']).toBeGreaterThan(1);
  });
});
