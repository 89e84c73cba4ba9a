import {
  SpanStatusCode,
  context as contextApi,
  trace,
  type Attributes,
  type SpanContext,
} from '@opentelemetry/api';
import type { BusEvent, ScopeRunner } from '../../bus/index.js';
import { LLM_ERROR } from '../../events/index.js';
import {
  ATTR_DEPTH,
  ATTR_END_REASON,
  ATTR_ERROR_TYPE,
  ATTR_EVENT_ID,
  ATTR_EVENT_PAYLOAD,
  ATTR_EVENT_SOURCE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_SPAN_KIND,
  ERROR_TYPE_ABANDONED,
  type EndReason,
} from '../attribute-names.js';
import { hrTimeFromUnixNano } from '../hr-time.js';
import type { SpanCore, SpanOwner } from '../span-core.js';
import type { ContainerLookup } from '../span-opener.js';
import { agentSpanKey } from '../span-keys.js';
import type { OpenSpan } from '../open-span.js';
import type { LlmFields, SubagentFields } from './agent-fields.js';
import { exportAgentCut } from './agent-cut.js';
import { applyLlmOutcome, applySubagentOutcome } from './agent-outcome.js';
import type { AgentCounts } from './agent-counts.js';
import type { AgentSessions } from './agent-sessions.js';
import { AgentSpan, type AgentSpanKind } from './agent-span.js';
import { forgetSpan, type SessionState } from './session-state.js';

/** How to start an agent span: its name, attributes, identity and where it goes. */
export interface AgentStart {
  readonly name: string;
  readonly attributes: Attributes;
  readonly agentName: string;
  /** Turn id, request id, spawn id or session id; `''` when the events carry none. */
  readonly key: string;
  /** Derived-id key when the event has no stable id of its own; `''` for the default. */
  readonly selfKey: string;
  /** When the span starts, if not at its event (an inferred start). */
  readonly startUnixNano?: bigint;
  /** The model a model call asks for. */
  readonly requestModel?: string;
  /** The container the events name (a turn id), asked when no causal ancestor has a span. */
  readonly explicit: () => SpanContext | undefined;
  /** The container that holds the event's work, asked last. */
  readonly heuristic: ContainerLookup;
}

/**
 * The agent room's spans from start to end, on the span core: starts them where they belong
 * (causal ancestor, else the container the events name, else the hook or active context, else
 * the newest container), bounds how many are open, ends them with their outcome, and records
 * other bus events on them.
 */
export class AgentSpans {
  readonly #core: SpanCore;
  readonly #sessions: AgentSessions;
  readonly #counts: AgentCounts;
  /** Open agent spans by span id, in start order (the first is the oldest, for eviction). */
  readonly #open = new Map<string, AgentSpan>();
  readonly #endReasons: Record<EndReason, number> = {
    result: 0,
    abandoned: 0,
    evicted: 0,
    shutdown: 0,
  };

  constructor(core: SpanCore, sessions: AgentSessions, counts: AgentCounts) {
    this.#core = core;
    this.#sessions = sessions;
    this.#counts = counts;
  }

  /** Agent spans open now. */
  get size(): number {
    return this.#open.size;
  }

  /** Agent spans ended so far, by why. */
  endReasons(): Record<EndReason, number> {
    return { ...this.#endReasons };
  }

  /** The open agent span the event `id` started, if any. */
  byStartId(id: string): AgentSpan | undefined {
    if (this.#open.size === 0) return undefined;
    const span = this.#core.openSpans.byStartId(id);
    return span instanceof AgentSpan ? span : undefined;
  }

  /** The scope a handler of `event` runs in: the span the event started, if any. */
  scopeFor(event: BusEvent): ScopeRunner | undefined {
    if (this.#open.size === 0) return undefined;
    const id = this.#core.idOf(event);
    return id === '' ? undefined : this.byStartId(id)?.runner;
  }

  /**
   * Whether a start event is a duplicate (counted): its id already started an open span, or
   * `named` says what it names (a turn or request id) is open already.
   */
  isDuplicateStart(event: BusEvent, named: () => AgentSpan | undefined = noSpan): boolean {
    const id = this.#core.idOf(event);
    if ((id === '' || this.byStartId(id) === undefined) && named() === undefined) return false;
    this.#counts.duplicateEvents += 1;
    return true;
  }

  /** The attributes every agent span has. */
  commonAttributes(
    event: BusEvent,
    sessionId: string,
    operation: string,
    kind: AgentSpanKind,
    agentName: string,
  ): Attributes {
    const causation = event.causation;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: operation,
      [ATTR_SPAN_KIND]: kind,
    };
    if (agentName !== '') attributes[ATTR_GEN_AI_AGENT_NAME] = agentName;
    if (causation.agentId !== '') attributes[ATTR_GEN_AI_AGENT_ID] = causation.agentId;
    if (sessionId !== '') attributes[ATTR_GEN_AI_CONVERSATION_ID] = sessionId;
    attributes[ATTR_DEPTH] = causation.depth;
    const id = this.#core.idOf(event);
    if (id !== '') attributes[ATTR_EVENT_ID] = id;
    if (event.source !== undefined && event.source !== '') {
      attributes[ATTR_EVENT_SOURCE] = event.source;
    }
    return attributes;
  }

  /** Starts an agent span for `event`; events the session kept waiting go on it (not on a chat). */
  start(
    kind: AgentSpanKind,
    event: BusEvent,
    now: number,
    session: SessionState,
    how: AgentStart,
  ): AgentSpan {
    const core = this.#core;
    const opener = core.opener;
    const startId = core.idOf(event);
    const startUnixNano = how.startUnixNano ?? event.timeUnixNano;
    const selfKey =
      how.selfKey !== ''
        ? how.selfKey
        : startId !== ''
          ? startId
          : agentSpanKey(kind, session.id, how.key, event.timeUnixNano);
    const parentId = kind === 'session' ? '' : event.causation.parentId;
    const ancestry = opener.ancestry(parentId, selfKey);
    const parentContext = opener.contextFor(
      ancestry.parent ?? how.explicit(),
      event,
      contextApi.active(),
      how.heuristic,
    );
    const oldest = this.#open.values().next().value;
    if (oldest !== undefined && this.#open.size >= core.options.maxOpenSpans) {
      this.endUnfinished(oldest, 'evicted');
    }
    const span = opener.open({
      name: how.name,
      startTime: hrTimeFromUnixNano(startUnixNano),
      attributes: how.attributes,
      parentContext,
      selfKey,
      traceKey: () => opener.traceKey(session.id, selfKey, ancestry.rootId),
    });
    const agent = new AgentSpan(
      span,
      {
        kind,
        sessionId: session.id,
        agentId: event.causation.agentId,
        depth: event.causation.depth,
        key: how.key,
        startEventId: kind === 'session' ? '' : startId,
        parentLink: parentId,
        parentSpanId: trace.getSpanContext(parentContext)?.spanId ?? '',
        startUnixNano,
        name: how.name,
        agentName: how.agentName,
        requestModel: how.requestModel ?? '',
      },
      now,
    );
    this.#open.set(agent.spanContext.spanId, agent);
    this.#counts.spansStarted += 1;
    core.startedContainer(agent, startUnixNano, now);
    if (kind !== 'chat' && session.pending.length > 0) {
      for (const pending of session.pending.splice(0)) this.record(agent, pending);
    }
    return agent;
  }

  /** Ends a span with the event that closes it: outcome from `fields`, status on failure. */
  endWith(
    agent: AgentSpan,
    event: BusEvent,
    now: number,
    fields: LlmFields | SubagentFields | undefined,
  ): void {
    const core = this.#core;
    const time = event.timeUnixNano;
    agent.touch(time, now);
    core.errors.contain('tracer', () => {
      if (agent.kind === 'chat' && fields !== undefined && 'model' in fields) {
        applyLlmOutcome(agent, fields, event.type === LLM_ERROR, time, core.filterMessage);
      } else if (agent.kind === 'subagent' && fields !== undefined && 'spawnId' in fields) {
        applySubagentOutcome(agent, fields, time, core.filterMessage);
      }
    });
    core.end(this.#owner, agent, 'result', time, now);
    this.rememberEnd(event, agent);
  }

  /** Ends a span at its own last activity, for `reason`; `abandoned` is an error. */
  endUnfinished(agent: AgentSpan, reason: EndReason): void {
    const core = this.#core;
    if (reason === 'abandoned') {
      agent.fail(ERROR_TYPE_ABANDONED);
      core.errors.contain('tracer', writeAbandoned, {
        agent,
        idleTimeoutMs: core.options.idleTimeoutMs,
      });
    }
    // The parent was last active with this child: its activity, not the sweep's clock.
    core.end(this.#owner, agent, reason, agent.lastUnixNano, agent.lastActivity);
  }

  /** Ends `agent` with `event` that closes it, without an outcome (`io.session.end`). */
  endAt(agent: AgentSpan, event: BusEvent, now: number): void {
    this.#core.end(this.#owner, agent, 'result', event.timeUnixNano, now);
  }

  /** Work the end event causes is the span's sibling: walks from it continue at its parent. */
  rememberEnd(event: BusEvent, agent: AgentSpan): void {
    const id = this.#core.idOf(event);
    if (id !== '') this.#core.index.rememberEvent(id, agent.parentLink);
  }

  /** Ends agent spans idle since `idleSince` (subscriber clock) that have no open child. */
  sweepIdle(idleSince: number): void {
    for (const agent of [...this.#open.values()]) {
      if (agent.lastActivity <= idleSince && !agent.hasOpenChildren) {
        this.endUnfinished(agent, 'abandoned');
      }
    }
  }

  /** Ends every open agent span (newest first, so children end before parents), marked `shutdown`. */
  shutdown(): void {
    for (const agent of [...this.#open.values()].reverse()) this.endUnfinished(agent, 'shutdown');
  }

  /** The open tool call or agent span the event's causal chain reaches first, if any. */
  targetOf(event: BusEvent): OpenSpan | undefined {
    const parentId = event.causation.parentId;
    if (parentId === '') return undefined;
    const openSpans = this.#core.openSpans;
    let found: OpenSpan | undefined;
    this.#core.index.ancestry(parentId, '', (id) => {
      found = openSpans.byStartId(id);
      return found?.spanContext;
    });
    return found;
  }

  /** Records another bus event on `target` as a span event, within its budget. */
  record(target: OpenSpan, event: BusEvent): void {
    const attributes: Attributes = {};
    if (event.source !== undefined && event.source !== '') {
      attributes[ATTR_EVENT_SOURCE] = event.source;
    }
    const capture = this.#core.capture;
    if (capture !== undefined && event.payload !== undefined) {
      const text = capture.text(ATTR_EVENT_PAYLOAD, event.payload);
      if (text !== undefined) attributes[ATTR_EVENT_PAYLOAD] = text;
    }
    const max = this.#core.options.maxStreamEvents;
    if (target.addBusEvent(event.type, attributes, event.timeUnixNano, max)) {
      this.#counts.busEventsRecorded += 1;
    } else {
      this.#counts.busEventsCoalesced += 1;
    }
  }

  /** What the span core's end path does for an agent span, around its own part. */
  readonly #owner: SpanOwner<AgentSpan> = {
    forgetEnded: (agent, reason) => {
      this.#open.delete(agent.spanContext.spanId);
      const session = this.#sessions.get(agent.sessionId);
      if (session !== undefined) forgetSpan(session, agent);
      this.#endReasons[reason] += 1;
    },
    closeSpan: (agent, reason, endUnixNano, exit) => {
      agent.span.setAttribute(ATTR_END_REASON, reason);
      agent.eventAttributes(agent.span);
      const end = endUnixNano > agent.startUnixNano ? endUnixNano : agent.startUnixNano;
      // Cut by shutdown: the span id is kept for its real end after a restart (see SpanExit).
      if (exit === 'cut') exportAgentCut(this.#core.opener, agent, end);
      else agent.span.end(agent.hrTime(end));
      this.#measure(agent, reason, end);
    },
  };

  #measure(agent: AgentSpan, reason: EndReason, endUnixNano: bigint): void {
    const metrics = this.#core.metrics;
    if (agent.kind === 'chat') {
      metrics.chatEnded(
        {
          agentName: agent.agentName,
          requestModel: agent.requestModel,
          responseModel: agent.responseModel,
          startUnixNano: agent.startUnixNano,
          endUnixNano,
          errorType: agent.errorType,
          inputTokens: agent.inputTokens,
          outputTokens: agent.outputTokens,
        },
        reason,
      );
    } else if (agent.kind !== 'session') {
      const { agentName, startUnixNano, errorType } = agent;
      metrics.agentEnded(agentName, startUnixNano, endUnixNano, errorType, reason);
    }
  }
}

/** Marks an agent span that saw no end event within the idle timeout as failed. */
function writeAbandoned({
  agent,
  idleTimeoutMs,
}: {
  agent: AgentSpan;
  idleTimeoutMs: number;
}): void {
  agent.span.setAttribute(ATTR_ERROR_TYPE, ERROR_TYPE_ABANDONED);
  agent.span.setStatus({
    code: SpanStatusCode.ERROR,
    message: `no end event within ${idleTimeoutMs} ms of the span's last activity`,
  });
}

function noSpan(): undefined {
  return undefined;
}
