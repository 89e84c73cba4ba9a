import { randomBytes } from 'node:crypto';

/** How a generated call ends: a result, an error, or a cancellation. */
export type CallOutcome = 'ok' | 'error' | 'cancelled';

/** One agent turn of a generated journal: a trace of its own (the sidecar's `causal-root`). */
export interface TurnPlan {
  readonly sessionId: string;
  readonly outcome: CallOutcome;
  /** The tool call's name (`execute_tool {tool}`). */
  readonly tool: string;
}

/**
 * The spans one turn becomes in the sidecar: `invoke_agent`, `chat`, `execute_tool` (no in-flight
 * snapshot: the journal's calls end within the live interval).
 */
export const SPANS_PER_TURN = 3;

/** Stream events per call (progress and partial output alternately). */
const STREAM_EVENTS = 4;

/** `count` turns, outcomes in the proportions given (the rest `ok`), or `all` of one. */
export function planTurns(
  count: number,
  options: { prefix: string; errorEvery?: number; cancelledEvery?: number; all?: CallOutcome },
): TurnPlan[] {
  const turns: TurnPlan[] = [];
  for (let index = 0; index < count; index += 1) {
    const outcome: CallOutcome =
      options.all ??
      (options.errorEvery !== undefined && index % options.errorEvery === 1
        ? 'error'
        : options.cancelledEvery !== undefined && index % options.cancelledEvery === 2
          ? 'cancelled'
          : 'ok');
    turns.push({
      sessionId: `${options.prefix}-session-${index}`,
      outcome,
      tool: outcome === 'ok' ? 'search' : outcome === 'error' ? 'fetch_prices' : 'slow_search',
    });
  }
  return turns;
}

/** Where a slow turn's feeder waits: the call is running, its result not yet written. */
export const PAUSE = Symbol('pause');

/**
 * The NDJSON lines of one turn, as an agent's `forwardEvents` writes them: a session start, a
 * turn, a model request and answer, one tool call with stream events and its result, the turn's
 * end. Each line is made when it is asked for and stamped with the time then (never earlier than
 * the line before), so that a feeder that waits before a slow call's result (at {@link PAUSE},
 * yielded only for a `slow` turn) writes it with the time it really took.
 */
export function* turnLines(turn: TurnPlan, slow = false): Generator<string | typeof PAUSE> {
  let ms = 0;
  const line = (type: string, parentId: string, payload: unknown): [string, string] => {
    const id = randomBytes(16).toString('hex');
    ms = Math.max(ms + 1, Date.now());
    const text = JSON.stringify({
      ts: new Date(ms).toISOString(),
      type,
      event_id: id,
      source: 'stack.agent',
      ...(parentId === '' ? {} : { parent_id: parentId }),
      session_id: turn.sessionId,
      agent_id: 'stack-agent',
      depth: 0,
      payload,
    });
    return [id, text];
  };
  let text: string;
  [, text] = line('io.session.start', '', { session_id: turn.sessionId });
  yield text;
  const [start, startText] = line('agent.turn.start', '', { turnId: 't1' });
  yield startText;
  const [ask, askText] = line('llm.request', start, {
    requestId: 'r1',
    turnId: 't1',
    model: 'stack-model',
  });
  yield askText;
  const [answer, answerText] = line('llm.response', ask, {
    requestId: 'r1',
    turnId: 't1',
    model: 'stack-model',
    usage: { inputTokens: 120, outputTokens: 20 },
    toolCalls: [{ id: 'tc_1' }],
  });
  yield answerText;
  const [invoke, invokeText] = line('tool.invoke', answer, {
    id: 'tc_1',
    name: turn.tool,
    arguments: { query: `query of ${turn.sessionId}` },
    turnId: 't1',
  });
  yield invokeText;
  for (let sequence = 1; sequence <= STREAM_EVENTS; sequence += 1) {
    [, text] = line(sequence % 2 === 0 ? 'tool.stream.partial' : 'tool.stream.progress', invoke, {
      tool_name: turn.tool,
      tool_id: 'tc_1',
      turn_id: 't1',
      sequence,
      progress: sequence / STREAM_EVENTS,
      payload: `part ${sequence} of ${turn.sessionId}`,
    });
    yield text;
  }
  if (slow) yield PAUSE;
  [, text] = line('tool.result', invoke, {
    id: 'tc_1',
    name: turn.tool,
    output: turn.outcome === 'ok' ? 'done' : '',
    turnId: 't1',
    ...(turn.outcome === 'error' ? { error: 'upstream answered 502', errorType: 'http_502' } : {}),
    ...(turn.outcome === 'cancelled' ? { error: 'cancelled', cancelled: true } : {}),
  });
  yield text;
  [, text] = line('agent.turn.end', start, { turnId: 't1' });
  yield text;
}
