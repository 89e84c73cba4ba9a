/**
 * The ten lines of issue 29 that made `view` hang and crash: a turn start without `seq`, two
 * `llm.response`s (one asking for `tc_1`, which is never invoked), lines with `ts: null`,
 * `ts: {}` and `type: null`, a failed call, and the turn's end.
 */
export const TEN_LINE_JOURNAL = `${[
  {
    ts: '2026-05-01T12:00:00.000Z',
    type: 'agent.turn.start',
    session_id: 's1',
    payload: { turn_id: 't1' },
  },
  {
    seq: 2,
    ts: '2026-05-01T12:00:00.100Z',
    type: 'llm.response',
    session_id: 's1',
    payload: { ToolCalls: [{ ID: 'tc_1', Name: 'search' }] },
  },
  {
    seq: 3,
    ts: '2026-05-01T12:00:00.200Z',
    type: 'llm.response',
    session_id: 's1',
    payload: { Content: 'hi' },
  },
  {
    seq: 4,
    ts: null,
    type: 'tool.invoke',
    session_id: 's1',
    payload: { ID: 'tc_2', Name: 'read' },
  },
  {
    seq: 5,
    ts: {},
    type: 'tool.result',
    session_id: 's1',
    payload: { ID: 'tc_2', Name: 'read', Output: 'x' },
  },
  { seq: 6, ts: '2026-05-01T12:00:00.300Z', type: null, session_id: 's1', payload: {} },
  {
    seq: 7,
    ts: '2026-05-01T12:00:00.400Z',
    type: 'tool.invoke',
    session_id: 's1',
    payload: { ID: 'tc_3', Name: 'grep' },
  },
  {
    seq: 8,
    ts: '2026-05-01T12:00:00.500Z',
    type: 'tool.result',
    session_id: 's1',
    payload: { ID: 'tc_3', Name: 'grep', Error: 'boom' },
  },
  { seq: 9, ts: '2026-05-01T12:00:00.600Z', type: 'io.output', session_id: 's1', payload: {} },
  {
    seq: 10,
    ts: '2026-05-01T12:00:01.000Z',
    type: 'agent.turn.end',
    session_id: 's1',
    payload: { turn_id: 't1' },
  },
]
  .map((line) => JSON.stringify(line))
  .join('\n')}\n`;
