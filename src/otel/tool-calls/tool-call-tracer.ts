import { ROOT_CONTEXT, context as contextApi } from '@opentelemetry/api';
import type { BusEvent, ScopeRunner } from '../../bus/index.js';
import {
  ATTR_STREAM_EVENTS_DROPPED,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  type ToolStreamProgress,
} from '../../events/index.js';
import type { AgentView } from '../agent-view.js';
import { ATTR_GEN_AI_AGENT_NAME, type EndReason } from '../attribute-names.js';
import { payloadBytes } from '../../bus/payload-bytes.js';
import { byTime } from '../hr-time.js';
import { globalLoggerProvider } from '../logger-provider.js';
import type { SpanCore, SpanOwner } from '../span-core.js';
import { callKey } from '../span-keys.js';
import type { ToolCallTracingStats } from '../tracing-stats.js';
import { applyResult, applyUnfinished } from './call-outcome.js';
import { EndedCalls } from './ended-calls.js';
import { HeldEvents, type HeldCall } from './held-events.js';
import { createLiveUpdates, type LiveUpdates } from './live-updates.js';
import { OpenCall, streamSettings, type StreamSettings } from './open-call.js';
import { OpenCalls } from './open-calls.js';
import { StreamLogRecords } from './stream-log-records.js';
import { PARTIAL, PROGRESS, type StreamKind } from './stream-sampler.js';
import {
  readInvoke,
  readResult,
  streamCallId,
  type InvokeFields,
  type ResultFields,
} from './tool-payloads.js';
import { ToolSpanStarter, type SpanStart } from './tool-span-starter.js';

/** Held events of one call past this many start its span without waiting for the invoke. */
const MAX_HELD_PER_CALL = 256;
/** Calls held at once past this many: the oldest starts its span without waiting. */
const MAX_HELD_CALLS = 1024;

type StreamPayload = Partial<ToolStreamProgress> | null | undefined;

/** The tool-call part of `ToolCallTracingStats`. */
export type ToolCallCounts = Omit<ToolCallTracingStats, 'agent' | 'errors'>;

/**
 * Turns tool calls into spans, on the span core: `tool.invoke` starts a call's span, stream
 * events are recorded on it, `tool.result` ends it. Open calls are found by invoke event id
 * (the hot path: stream events carry it as their causal parent) or by tool call id; events
 * that come before their invoke wait in {@link HeldEvents}; ended calls are remembered in
 * {@link EndedCalls} so late and duplicate events are recognized. The subscriber contains what
 * its entry points throw.
 */
export class ToolCallTracer {
  readonly #core: SpanCore;
  readonly #agent: AgentView;
  readonly #settings: StreamSettings;
  readonly #held = new HeldEvents();
  readonly #open: OpenCalls;
  readonly #ended: EndedCalls;
  readonly #starter: ToolSpanStarter;
  readonly #live: LiveUpdates | undefined;
  readonly #logRecords: StreamLogRecords | undefined;
  readonly #counts = {
    spansStarted: 0,
    orphanSpans: 0,
    streamEvents: 0,
    streamEventsCoalesced: 0,
    streamEventsDropped: 0,
    duplicateEvents: 0,
    lateEvents: 0,
    unpairedEvents: 0,
    reusedCallIds: 0,
    heldReleasedEarly: 0,
  };
  readonly #endReasons: Record<EndReason, number> = {
    result: 0,
    abandoned: 0,
    evicted: 0,
    shutdown: 0,
  };

  constructor(core: SpanCore, agent: AgentView) {
    const options = core.options;
    this.#core = core;
    this.#agent = agent;
    this.#open = new OpenCalls(core.openSpans);
    this.#ended = new EndedCalls(core.index, options.maxRememberedEvents, options.maxEndedCalls);
    this.#starter = new ToolSpanStarter(core, agent, this.#open);
    // With log records only, the span keeps its stream summary and no stream span events.
    const spanEvents = options.streamEvents === 'log-records' ? 0 : options.maxStreamEvents;
    this.#settings = streamSettings(spanEvents, core.capture);
    this.#logRecords =
      options.streamEvents === 'span-events'
        ? undefined
        : new StreamLogRecords(options.loggerProvider ?? globalLoggerProvider(), core.capture);
    const liveProvider = options.liveTracerProvider ?? core.provider;
    this.#live = createLiveUpdates(
      options,
      liveProvider === core.provider ? core.tracer : undefined,
      { open: this.#open, capture: core.capture, errors: core.errors },
    );
  }

  stats(): ToolCallCounts {
    return {
      openSpans: this.#open.size,
      heldEvents: this.#held.eventCount,
      heldBytes: this.#held.bytes,
      endedCalls: this.#ended.remembered,
      ...this.#counts,
      inflightUpdates: this.#live?.exported ?? 0,
      spansEnded: { ...this.#endReasons },
    };
  }

  /** The scope a `tool.invoke`'s handlers (the plugin that runs the tool) run in: the call's span. */
  scopeFor(event: BusEvent): ScopeRunner | undefined {
    const id = this.#core.idOf(event);
    if (id !== '') return this.#open.byInvokeId(id)?.runner;
    const callId = readInvoke(event.payload).callId;
    return this.#open.pairsByCallId
      ? this.#open.byCallId(event.causation.sessionId, callId)?.runner
      : undefined;
  }

  /** A `tool.stream.partial` or `tool.stream.progress`: recorded on its call, or held for it. */
  onStream(event: BusEvent, kind: StreamKind): void {
    const parentId = event.causation.parentId;
    let call = parentId === '' ? undefined : this.#open.byInvokeId(parentId);
    if (call === undefined) {
      const callId = streamCallId(event.payload);
      call = this.#open.byCallId(event.causation.sessionId, callId);
      if (call === undefined) {
        this.#unmatched(event, parentId, callId);
        return;
      }
    }
    this.#recordStream(call, event.timeUnixNano, event.payload, kind);
  }

  /**
   * The quick path of a stream event (see `QuickPath`): recorded on the open call its causal
   * parent started, as {@link ToolCallTracer.onStream} would, and `true`; `false`, having
   * changed nothing, when no open call has that invoke id (the event is then built and
   * delivered, to be held, counted late or paired by call id).
   */
  quickStream(payload: unknown, parentId: string, timeUnixNano: bigint, kind: StreamKind): boolean {
    const call = parentId === '' ? undefined : this.#open.byInvokeId(parentId);
    if (call === undefined) return false;
    this.#recordStream(call, timeUnixNano, payload, kind);
    return true;
  }

  /** A `tool.invoke`: starts the call's span, or names the orphan span its events started. */
  onInvoke(event: BusEvent): void {
    this.#core.sweep.readClock();
    const invokeId = this.#core.idOf(event);
    const fields = readInvoke(event.payload);
    const { sessionId, parentId } = event.causation;
    // An invoke whose id the bus drew just now cannot be open, ended or a duplicate by its id.
    const isNew = invokeId !== '' && this.#core.isNewEvent(event);
    let open = invokeId === '' || isNew ? undefined : this.#open.byInvokeId(invokeId);
    if (open === undefined && (invokeId === '' || this.#open.pairsByCallId)) {
      open = this.#open.byCallId(sessionId, fields.callId);
    }
    if (open !== undefined) {
      if (open.orphan && !open.invokeLate) {
        this.#attachLateInvoke(open, event, invokeId, fields);
        return;
      }
      if (invokeId === '' || open.invokeId === invokeId) {
        this.#counts.duplicateEvents += 1;
        return;
      }
    }
    if (invokeId !== '') {
      if (!isNew && this.#ended.has(invokeId)) {
        this.#counts.duplicateEvents += 1;
        return;
      }
      // Another invoke while a call with the same call id is still open: a call of its own.
      if (open !== undefined) this.#counts.reusedCallIds += 1;
    } else {
      // Without event ids, an ended call with the same key is this very line replayed (same
      // time) or the call id used again in the session for a new call.
      const endedStart = this.#ended.startOf(callKey(sessionId, fields.callId));
      if (endedStart === event.timeUnixNano) {
        this.#counts.duplicateEvents += 1;
        return;
      }
      if (endedStart !== undefined) this.#counts.reusedCallIds += 1;
    }
    const call = this.#start(
      {
        name: fields.name,
        invokeId,
        callId: fields.callId,
        sessionId,
        parentId,
        parentCallId: fields.parentCallId,
        startUnixNano: event.timeUnixNano,
        attributes: this.#starter.invokeAttributes(event, invokeId, fields),
        event,
        // A parentContext hook, when there is one, decides instead of the active context.
        activeContext:
          this.#core.options.parentContext === undefined ? contextApi.active() : ROOT_CONTEXT,
        turnId: fields.turnId,
        links: this.#agent.linksFor(sessionId, fields.callId),
      },
      false,
    );
    call.noteMcp(fields.attributes, 'server');
    if (this.#held.callCount === 0) return;
    const byId = this.#held.take(invokeId);
    const byKey = this.#held.take(callKey(call.sessionId, call.callId));
    if (byId !== undefined || byKey !== undefined) {
      this.#applyHeld(call, [...(byId?.events ?? []), ...(byKey?.events ?? [])]);
    }
  }

  /** A `tool.result`: ends its call's span, or is held for (or counted against) its call. */
  onResult(event: BusEvent): void {
    const result = readResult(event.payload);
    const parentId = event.causation.parentId;
    const call =
      (parentId === '' ? undefined : this.#open.byInvokeId(parentId)) ??
      this.#open.byCallId(event.causation.sessionId, result.callId);
    if (call === undefined) this.#unmatched(event, parentId, result.callId);
    else this.#finish(call, event, result);
  }

  /**
   * The sweep's part for tool calls: releases held events past the reorder window (their spans
   * start without the invoke) and ends calls idle since `idleSince`, marked `abandoned`. Returns
   * whether any call is open or held.
   */
  sweepIdle(now: number, idleSince: number): boolean {
    for (const held of this.#held.takeExpired(now - this.#core.options.reorderWindowMs)) {
      this.#promote(held);
    }
    for (const call of this.#open) {
      if (call.lastActivity <= idleSince) this.#endUnfinished(call, 'abandoned');
    }
    return this.#open.size !== 0 || this.#held.callCount !== 0;
  }

  /** Stops in-flight snapshots, starts spans for held events, ends every open call `shutdown`. */
  shutdown(): void {
    this.#live?.close();
    for (const held of this.#held.takeAll()) this.#promote(held);
    for (const call of this.#open) this.#endUnfinished(call, 'shutdown');
  }

  /** What the span core's end path does for a call, around its own part. */
  readonly #owner: SpanOwner<OpenCall> = {
    forgetEnded: (call, reason) => {
      this.#open.remove(call);
      this.#ended.remember(call, this.#open.pairsByCallId);
      this.#counts.streamEventsCoalesced += call.coalescedCount;
      this.#endReasons[reason] += 1;
    },
    closeSpan: (call, reason, endUnixNano, exit) => {
      this.#live?.finish(call);
      // Cut by shutdown (derived ids; so there are live updates): what the call did so far goes
      // out as a snapshot, and its span id is kept for its real end, read again after a restart.
      if (exit === 'cut') this.#live?.cut(call, endUnixNano);
      else call.span.end(call.hrTime(endUnixNano));
      const metrics = this.#core.metrics;
      // Without a meter that records, the measurement would be built for nothing.
      if (!metrics.recording) return;
      const measurement = {
        toolName: call.toolName,
        agentName: call.agentName,
        startUnixNano: call.startUnixNano,
        endUnixNano,
        errorType: call.errorType,
        firstPartialUnixNano: call.firstPartialUnixNano,
        streamEvents: call.streamEventCount,
      };
      metrics.callEnded(measurement, reason, call.meteredName);
      const mcp = call.mcp;
      if (mcp !== undefined) metrics.mcpCallEnded(measurement, mcp, reason);
    },
  };

  #recordStream(call: OpenCall, time: bigint, streamPayload: unknown, kind: StreamKind): void {
    const payload = streamPayload as StreamPayload;
    const recorded = call.recordStream(
      kind,
      time,
      payload?.sequence,
      payload?.progress,
      payload?.payload,
      payload?.attributes,
      this.#core.sweep.now,
    );
    if (!recorded) {
      this.#counts.duplicateEvents += 1;
      return;
    }
    this.#counts.streamEvents += 1;
    const records = this.#logRecords;
    if (records === undefined) return;
    records.emit(
      call,
      kind,
      time,
      payload?.sequence,
      payload?.progress,
      payload?.payload,
      payload?.attributes,
    );
  }

  /** Ends `call` with its `tool.result` `event`. */
  #finish(call: OpenCall, event: BusEvent, result: ResultFields): void {
    const core = this.#core;
    const resultId = core.idOf(event);
    const time = event.timeUnixNano;
    call.touch(time, core.sweep.now);
    call.noteMcp(result.attributes, 'client');
    const dropped = (result.attributes as Record<string, unknown> | undefined)?.[
      ATTR_STREAM_EVENTS_DROPPED
    ];
    if (typeof dropped === 'number' && Number.isSafeInteger(dropped) && dropped > 0) {
      // The project prefix is the tracer's own: a producer's count is taken in here, by name.
      call.span.setAttribute(ATTR_STREAM_EVENTS_DROPPED, dropped);
      this.#counts.streamEventsDropped += dropped;
    }
    core.errors.contain('tracer', () =>
      applyResult(call, result, resultId, time, core.capture, core.filterMessage),
    );
    core.end(this.#owner, call, 'result', time, core.sweep.now);
    // Work this result causes is the call's sibling: walks from it continue at the call's parent
    // (for a root call, an unknown result id ends the walk just as well).
    if (resultId !== '' && call.parentLink !== '')
      core.index.rememberEvent(resultId, call.parentLink);
  }

  /** Records held events, in time order, on the call they were waiting for. */
  #applyHeld(call: OpenCall, events: BusEvent[]): void {
    for (const event of events.sort(byTime)) {
      this.#core.errors.contain('tracer', () => {
        if (call.ended) this.#counts.lateEvents += 1;
        else if (event.type === TOOL_RESULT) this.#finish(call, event, readResult(event.payload));
        else
          this.#recordStream(
            call,
            event.timeUnixNano,
            event.payload,
            event.type === TOOL_STREAM_PARTIAL ? PARTIAL : PROGRESS,
          );
      });
    }
  }

  /** A stream event or result whose call is not open: late, or held until its invoke comes. */
  #unmatched(event: BusEvent, parentId: string, callId: string): void {
    const key = callKey(event.causation.sessionId, callId);
    if (
      this.#ended.has(parentId) ||
      this.#ended.has(key) ||
      this.#ended.forgotten(event.causation.parentSeq)
    ) {
      this.#counts.lateEvents += 1;
      return;
    }
    const now = this.#core.sweep.now;
    // A parent the index knows as a plain event is not the invoke: pair by call key instead.
    const holdKey = parentId !== '' && !this.#core.index.knows(parentId) ? parentId : key;
    if (holdKey === '') {
      if (event.type !== TOOL_RESULT) {
        this.#counts.unpairedEvents += 1;
        return;
      }
      this.#promote({
        key: holdKey,
        events: [event],
        bytes: 0,
        since: now,
        context: ROOT_CONTEXT,
      });
      return;
    }
    const options = this.#core.options;
    const bytes = payloadBytes(event.payload);
    const held = this.#held.hold(holdKey, event, bytes, now, contextApi.active());
    if (options.reorderWindowMs === 0) {
      this.#promote(this.#held.take(holdKey) ?? held);
    } else if (held.events.length >= MAX_HELD_PER_CALL) {
      this.#counts.heldReleasedEarly += 1;
      this.#promote(this.#held.take(holdKey) ?? held);
    } else {
      while (this.#held.callCount > MAX_HELD_CALLS || this.#held.bytes > options.maxHeldBytes) {
        const oldest = this.#held.takeOldest();
        if (oldest === undefined) break;
        this.#counts.heldReleasedEarly += 1;
        this.#promote(oldest);
      }
    }
    this.#core.sweep.ensureRunning();
  }

  /** Starts a span for held events whose invoke never came, then records them on it. */
  #promote(held: HeldCall): void {
    const events = held.events.sort(byTime);
    const start = this.#starter.orphanStart(held.key, events, held.context);
    if (start === undefined) return;
    const call = this.#start(start, true);
    this.#counts.orphanSpans += 1;
    this.#applyHeld(call, events);
  }

  #attachLateInvoke(call: OpenCall, event: BusEvent, invokeId: string, fields: InvokeFields): void {
    call.touch(event.timeUnixNano, this.#core.sweep.now);
    if (call.attachLateInvoke(invokeId, event.causation.parentId, fields.name)) {
      this.#core.openSpans.add(call);
    }
    call.span.setAttributes(this.#starter.invokeAttributes(event, invokeId, fields));
    call.noteMcp(fields.attributes, 'server');
  }

  #start(start: SpanStart, orphan: boolean): OpenCall {
    const core = this.#core;
    const oldest = this.#open.oldest;
    if (oldest !== undefined && this.#open.size >= core.options.maxOpenSpans) {
      this.#endUnfinished(oldest, 'evicted');
    }
    const now = core.sweep.now;
    const { span, parentSpanId, startTime } = this.#starter.start(start);
    const agentName = start.attributes[ATTR_GEN_AI_AGENT_NAME];
    const call = new OpenCall(
      span,
      {
        invokeId: start.invokeId,
        callId: start.callId,
        sessionId: start.sessionId,
        parentLink: start.parentId,
        parentSpanId,
        toolName: start.name,
        agentId: start.event.causation.agentId,
        agentName: typeof agentName === 'string' ? agentName : '',
        startUnixNano: start.startUnixNano,
        startHrTime: startTime,
        orphan,
        // An orphan's events point at their invoke by parent sequence.
        invokeSequence: orphan ? start.event.causation.parentSeq : start.event.causation.sequence,
      },
      now,
      this.#settings,
    );
    core.started(call, start.startUnixNano, now);
    core.errors.contain('tracer', this.#countStarted, start.name);
    this.#open.add(call);
    this.#counts.spansStarted += 1;
    core.sweep.ensureRunning();
    this.#live?.watch();
    return call;
  }

  readonly #countStarted = (toolName: string): void => this.#core.metrics.callStarted(toolName);

  #endUnfinished(call: OpenCall, reason: EndReason): void {
    const core = this.#core;
    core.errors.contain('tracer', () => applyUnfinished(call, reason, core.options.idleTimeoutMs));
    core.end(this.#owner, call, reason, call.lastUnixNano, core.sweep.now);
  }
}
