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

/**
 * Lines of a Nexus journal written at `ms` milliseconds after noon, 2026-05-01, in session `s`,
 * with Go field names and no event ids, as the engine writes them.
 */
function timedLine(seq: number, ms: number, type: string, payload?: unknown): string {
  return JSON.stringify({
    seq,
    ts: new Date(Date.UTC(2026, 4, 1, 12) + ms).toISOString(),
    type,
    source: 'nexus.agent',
    session_id: 's',
    ...(payload === undefined ? {} : { payload }),
  });
}

/**
 * A planner hand-off as Nexus journals it: the turn starts at 20 ms, the planner answers at
 * 50 ms (`plan.request`, `plan.created`, `plan.result`), and the model's answer comes at 70 ms
 * with no `llm.request` before it.
 */
export function plannerJournal(): string {
  const lines = [
    timedLine(1, 0, 'io.session.start', { session_id: 's' }),
    timedLine(2, 20, 'agent.turn.start', { TurnID: 't1' }),
    timedLine(3, 30, 'plan.request', { Goal: 'list the files' }),
    timedLine(4, 40, 'plan.created', { Steps: ['ls'] }),
    timedLine(5, 50, 'plan.result', { Approved: true }),
    timedLine(6, 70, 'llm.response', {
      TurnID: 't1',
      Model: 'claude-sonnet',
      Usage: { PromptTokens: 30, CompletionTokens: 5 },
      FinishReason: 'end_turn',
    }),
    timedLine(7, 80, 'agent.turn.end', { TurnID: 't1' }),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * A delegation to a sub-agent whose `subagent.complete` carries `TokensUsed` as a plain number
 * (as Nexus documents it in the delegate tool's output) and `Iterations` as a string: spawned at
 * 10 ms, complete at 400 ms, the turn over at 500 ms.
 */
export function delegateJournal(): string {
  const lines = [
    timedLine(1, 0, 'io.session.start', { session_id: 's' }),
    timedLine(2, 5, 'agent.turn.start', { TurnID: 't1' }),
    timedLine(3, 10, 'subagent.spawn', { SpawnID: 'sp1', Task: 'summarise', ParentTurnID: 't1' }),
    timedLine(4, 400, 'subagent.complete', {
      SpawnID: 'sp1',
      Iterations: '3',
      TokensUsed: 1832,
    }),
    timedLine(5, 410, 'subagent.complete', { SpawnID: 'sp2', Iterations: '1' }),
    timedLine(6, 500, 'agent.turn.end', { TurnID: 't1' }),
  ];
  return `${lines.join('\n')}\n`;
}
