/**
 * A Nexus journal as the Go engine writes it: no event ids, no parent ids, no session on the
 * envelopes (only `io.session.start` names it, in lower case), `ts` as RFC 3339 with an offset,
 * Go field names, and only `llm.response` (no `llm.request`).
 */
export function nexusJournal(session: string, withTool: boolean, startSeconds = 0): string {
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
