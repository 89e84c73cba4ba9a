import { ROOT_CONTEXT, trace, type Attributes } from '@opentelemetry/api';
import {
  ATTR_END_REASON,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_INFLIGHT,
  INFLIGHT_NAME_SUFFIX,
} from '../attribute-names.js';
import { agentCutKey } from '../span-keys.js';
import type { SpanOpener } from '../span-opener.js';
import type { AgentSpan } from './agent-span.js';

/**
 * Exports an agent span still open at shutdown (a turn, a model call, a sub-agent, a session)
 * as a snapshot, `{name} (in flight)`, marked `tooltrace.inflight=true` and
 * `tooltrace.end_reason=shutdown`, whose parent is the span's own id, in place of the span
 * itself. With derived ids a restart reads the span again and ends it under that id: the id is
 * kept for the span's real end, so no backend gets two different spans under one id. The
 * snapshot's own id is derived from where it ends: another cut of the same span that got
 * further is another snapshot. It carries no `gen_ai.operation.name`, so span metrics count
 * the span once, by its real end.
 */
export function exportAgentCut(opener: SpanOpener, agent: AgentSpan, endUnixNano: bigint): void {
  const attributes: Attributes = {
    [ATTR_INFLIGHT]: true,
    [ATTR_END_REASON]: 'shutdown',
  };
  if (agent.sessionId !== '') attributes[ATTR_GEN_AI_CONVERSATION_ID] = agent.sessionId;
  if (agent.agentName !== '') attributes[ATTR_GEN_AI_AGENT_NAME] = agent.agentName;
  const snapshot = opener.open({
    name: `${agent.name}${INFLIGHT_NAME_SUFFIX}`,
    startTime: agent.hrTime(agent.startUnixNano),
    attributes,
    parentContext: trace.setSpanContext(ROOT_CONTEXT, agent.spanContext),
    selfKey: agentCutKey(agent.spanContext.spanId, endUnixNano),
    // The parent is valid: no trace id is drawn.
    traceKey: () => '',
  });
  snapshot.end(agent.hrTime(endUnixNano));
}
