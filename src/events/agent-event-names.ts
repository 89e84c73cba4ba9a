/** A session begins; payload {@link SessionStart} (`sessionId`; `session_id` in a journal). */
export const IO_SESSION_START = 'io.session.start';
/** A session is over; payload {@link SessionEnd}. */
export const IO_SESSION_END = 'io.session.end';
/** An agent turn begins; payload {@link TurnInfo}. */
export const AGENT_TURN_START = 'agent.turn.start';
/** An agent turn is over; payload {@link TurnInfo}. */
export const AGENT_TURN_END = 'agent.turn.end';
/** The agent asks a model; payload {@link LlmRequest}. */
export const LLM_REQUEST = 'llm.request';
/** The model answered in full; payload {@link LlmResponse}. */
export const LLM_RESPONSE = 'llm.response';
/** One chunk of a streamed model answer; payload {@link LlmStreamChunk}. */
export const LLM_STREAM_CHUNK = 'llm.stream.chunk';
/** A streamed model answer is complete; payload {@link LlmStreamEnd}. */
export const LLM_STREAM_END = 'llm.stream.end';
/** The model call failed; payload {@link LlmError}. */
export const LLM_ERROR = 'llm.error';
/** A sub-agent is asked for; payload {@link SubagentSpawn}. */
export const SUBAGENT_SPAWN = 'subagent.spawn';
/** A sub-agent began running; payload {@link SubagentStarted}. */
export const SUBAGENT_STARTED = 'subagent.started';
/** A sub-agent finished one iteration; payload {@link SubagentIteration}. */
export const SUBAGENT_ITERATION = 'subagent.iteration';
/** A sub-agent is done; payload {@link SubagentComplete}. */
export const SUBAGENT_COMPLETE = 'subagent.complete';
