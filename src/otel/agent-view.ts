import type { Link, SpanContext } from '@opentelemetry/api';
import type { BusEvent } from '../bus/index.js';

/**
 * What tool calls learn from the agent around them (`agent/`'s tracer answers): where a call
 * with no causal ancestor span goes, the tool description a model call declared, the session an
 * event without one belongs to, and the model call whose answer asked for the call. Defined in
 * the core so that `tool-calls/` depends on the agent's answers, not on its code.
 */
export interface AgentView {
  /** The open turn named `turnId` in the event's session, if any. */
  namedTurn(event: BusEvent, turnId: string): SpanContext | undefined;
  /** The newest open turn (or sub-agent, or session root) the event belongs to, if any. */
  readonly newestContainer: (event: BusEvent) => SpanContext | undefined;
  /** The description an `llm.request` declared for a tool, when the invoke has none. */
  describe(sessionId: string, toolName: string): string | undefined;
  /** The event's session: its own, else the one `io.session.start` last announced. */
  sessionOf(event: BusEvent): string;
  /** A link to the model call whose answer asked for tool call `callId`, when known. */
  linksFor(sessionId: string, callId: string): Link[] | undefined;
}
