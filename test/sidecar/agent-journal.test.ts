import { describe, expect, it } from 'vitest';
import type { ReceivedSpan } from '../../src/testing/index.js';
import { delegateJournal, nexusJournal, plannerJournal } from './nexus-journal.js';
import { startSidecar, useReceiver } from './sidecar-process.js';

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

  it('starts an inferred chat span at the previous event of its turn, plan.result in a planner hand-off', async () => {
    expect((await run(plannerJournal()).exited).code).toBe(0);
    const [chat] = byName(testbed.receiver.spans, 'chat claude-sonnet');
    const noon = BigInt(Date.UTC(2026, 4, 1, 12)) * 1_000_000n;
    expect(chat!.attributes['tooltrace.start_inferred']).toBe(true);
    expect(chat!.startTimeUnixNano).toBe(noon + 50_000_000n);
    expect(chat!.endTimeUnixNano).toBe(noon + 70_000_000n);
  });

  it('ends a sub-agent at its subagent.complete when TokensUsed is a number and Iterations a string, counting the dropped field once', async () => {
    const sidecar = run(delegateJournal());
    expect((await sidecar.exited).code).toBe(0);
    const [subagent] = byName(testbed.receiver.spans, 'invoke_agent summarise');
    const noon = BigInt(Date.UTC(2026, 4, 1, 12)) * 1_000_000n;
    expect(subagent!.endTimeUnixNano).toBe(noon + 400_000_000n);
    expect(subagent!.attributes['tooltrace.end_reason']).toBe('result');
    const stderr = sidecar.stderr();
    const reports = stderr.split('\n').filter((line) => line.includes('is left out'));
    expect(reports).toEqual([
      'tooltrace sidecar: a subagent.complete line has payload.Iterations must be a finite number, got "3"; the field is left out and the event kept (counted in tooltrace_fields_dropped_total, reported once per field)',
    ]);
    expect(stderr).toContain('2 fields dropped (subagent.complete payload.Iterations=2)');
    expect(stderr).not.toContain('rejected (');
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
