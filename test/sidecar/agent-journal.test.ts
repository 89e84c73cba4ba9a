import { describe, expect, it } from 'vitest';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

/**
 * A Nexus journal as the Go engine writes it: no event ids, no parent ids, no session on the
 * envelopes (only `io.session.start` names it, in lower case), `ts` as RFC 3339 with an offset,
 * Go field names, and only `llm.response` (no `llm.request`).
 */
function nexusJournal(session: string, withTool: boolean, startSeconds = 0): string {
  let seq = 0;
  const line = (type: string, payload?: unknown): string => {
    seq += 1;
    const ts = new Date(Date.UTC(2026, 4, 1, 12, 0, startSeconds + seq)).toISOString();
    return JSON.stringify({
      seq,
      ts: ts.replace('Z', '+00:00'),
      type,
      source: 'nexus.agent.react',
      ...(payload === undefined ? {} : { payload }),
    });
  };
  const lines = [
    line('io.session.start', { session_id: session }),
    line('io.input', { _schema_version: 1, Content: 'list the files' }),
    line('agent.turn.start'),
  ];
  if (withTool) {
    lines.push(
      line('llm.response', {
        _schema_version: 1,
        Content: '',
        ToolCalls: [{ ID: 'tc_1', Name: 'shell', Arguments: '{"command":"ls"}' }],
        Usage: { PromptTokens: 200, CompletionTokens: 20, TotalTokens: 220 },
        Model: 'claude-sonnet',
        FinishReason: 'tool_use',
      }),
      line('tool.invoke', {
        _schema_version: 1,
        ID: 'tc_1',
        Name: 'shell',
        Arguments: { command: 'ls' },
        TurnID: '',
        ParentCallID: '',
        Sequence: 0,
      }),
      line('tool.result', {
        _schema_version: 1,
        ID: 'tc_1',
        Name: 'shell',
        Output: 'a.txt',
        Error: '',
        OutputFile: '',
        OutputData: null,
        OutputStructured: null,
        TurnID: '',
      }),
    );
  }
  lines.push(
    line('llm.response', {
      _schema_version: 1,
      Content: 'There is one file.',
      ToolCalls: null,
      Usage: { PromptTokens: 240, CompletionTokens: 12 },
      Model: 'claude-sonnet',
      FinishReason: 'end_turn',
    }),
    line('io.output', { Content: 'There is one file.' }),
    line('agent.turn.end'),
    line('io.session.end', { session_id: session }),
  );
  return `${lines.join('\n')}\n`;
}

function byName(spans: readonly ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((span) => span.name === name);
}

describe('tooltrace sidecar --stdin with a Nexus journal', () => {
  const testbed = useReceiver();

  const run = (input: string, args: string[] = []) =>
    startSidecar(['--stdin', ...args], {
      input,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: testbed.receiver.url },
    });

  it('exports one trace per turn: the turn, a chat span per llm.response with tokens, the tool under the turn', async () => {
    expect((await run(nexusJournal('sess-1', true)).exited).code).toBe(0);
    const spans = testbed.receiver.spans;
    const [turn] = byName(spans, 'invoke_agent');
    const chats = byName(spans, 'chat claude-sonnet');
    const [tool] = byName(spans, 'execute_tool shell');
    expect(turn).toBeDefined();
    expect(turn!.parentSpanId).toBe('');
    expect(chats).toHaveLength(2);
    expect(tool).toBeDefined();
    for (const span of [...chats, tool!]) {
      expect(span.parentSpanId).toBe(turn!.spanId);
      expect(span.traceId).toBe(turn!.traceId);
    }
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 200,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.response.finish_reasons': ['tool_use'],
      'tooltrace.start_inferred': true,
    });
    expect(tool!.links.map((link) => link.spanId)).toEqual([chats[0]!.spanId]);
    for (const span of spans) expect(span.attributes['gen_ai.conversation.id']).toBe('sess-1');
    // What happened around the turn is on it.
    expect(turn!.events.map((event) => event.name)).toEqual(['io.input', 'io.output']);
  });

  it('exports a journal with no tool call at all', async () => {
    expect((await run(nexusJournal('quiet', false)).exited).code).toBe(0);
    const names = testbed.receiver.spans.map((span) => span.name).sort();
    expect(names).toEqual(['chat claude-sonnet', 'invoke_agent']);
  });

  it('gives two sessions that reuse tc_1 a tool span each, in separate traces', async () => {
    const input = nexusJournal('first', true) + nexusJournal('second', true, 100);
    expect((await run(input).exited).code).toBe(0);
    const tools = byName(testbed.receiver.spans, 'execute_tool shell');
    expect(tools.map((span) => span.attributes['gen_ai.conversation.id'])).toEqual([
      'first',
      'second',
    ]);
    expect(new Set(tools.map((span) => span.traceId)).size).toBe(2);
  });

  it('leaves out --exclude-events and names turns after --agent-name', async () => {
    const sidecar = run(nexusJournal('s', true), [
      '--exclude-events',
      'io.*',
      '--agent-name',
      'react',
    ]);
    expect((await sidecar.exited).code).toBe(0);
    const [turn] = byName(testbed.receiver.spans, 'invoke_agent react');
    expect(turn?.events).toEqual([]);
  });
});
