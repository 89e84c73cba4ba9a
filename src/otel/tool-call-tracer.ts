import {
  ROOT_CONTEXT,
  context as contextApi,
  metrics,
  trace,
  type TracerProvider,
} from '@opentelemetry/api';
import type { BusEvent, EventBus, ScopeRunner } from '../bus/index.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  type ToolStreamProgress,
} from '../events/index.js';
import { VERSION } from '../version.js';
import { ATTR_GEN_AI_AGENT_NAME, type EndReason } from './attribute-names.js';
import { AgentMetrics } from './agent-metrics.js';
import { globalLoggerProvider } from './logger-provider.js';
import { StreamLogRecords } from './stream-log-records.js';
import { AgentTracer } from './agent-tracer.js';
import { GenerationalMap } from './generational-map.js';
import { eventTypeFilter } from './event-type-filter.js';
import { flushProviders } from './flush-provider.js';
import { CausalIndex } from './causal-index.js';
import { ContentCapture } from './content-capture.js';
import { ErrorReporter } from './error-reporter.js';
import { HeldEvents, type HeldCall } from './held-events.js';
import { byTime } from './hr-time.js';
import { createLiveUpdates, type LiveUpdates } from './live-updates.js';
import { OpenCall, streamSettings, type StreamSettings } from './open-call.js';
import { OpenCalls } from './open-calls.js';
import type { ResolvedOptions } from './options.js';
import { applyResult, applyUnfinished } from './span-outcome.js';
import { callKey } from './span-keys.js';
import { SpanStarter, type SpanStart } from './span-starter.js';
import { stableEventIdReader } from './stable-event-id.js';
import { PARTIAL, PROGRESS, type StreamKind } from './stream-sampler.js';
import {
  readInvoke,
  readResult,
  streamCallId,
  type InvokeFields,
  type ResultFields,
} from './tool-payloads.js';
import type { ToolCallTracingStats } from './tracing-stats.js';

/** Held events of one call past this many start its span without waiting for the invoke. */
const MAX_HELD_PER_CALL = 256;
/** Calls held at once past this many: the oldest starts its span without waiting. */
const MAX_HELD_CALLS = 1024;
/** The subscriber runs before every other handler, so it sees a `tool.invoke` first. */
const FIRST = Number.MIN_SAFE_INTEGER;
/** Vetoable events (`before:tool.result`) are announcements, not events of their own. */
const BEFORE_PREFIX = 'before:';
/** The key the redact hook sees for error messages. */
const ERROR_MESSAGE_KEY = 'error.message';

type StreamPayload = Partial<ToolStreamProgress> | null | undefined;

/**
 * The subscriber behind `traceToolCalls`: one handler for every bus event, in front of all
 * others. Open calls are found by invoke event id (the hot path: stream events carry it as their
 * causal parent) or by tool call id; recent events are remembered in a bounded
 * {@link CausalIndex} for parentage and for recognizing late and duplicate events; events that
 * come before their invoke wait in {@link HeldEvents}; one unref'd sweep timer ends idle calls
 * and releases held events. Every entry point catches what it throws: the bus never sees a
 * failure.
 */
export class ToolCallTracer {
  readonly #options: ResolvedOptions;
  readonly #providers: readonly TracerProvider[];
  readonly #settings: StreamSettings;
  readonly #capture: ContentCapture | undefined;
  readonly #errorText: ContentCapture;
  readonly #errors = new ErrorReporter();
  readonly #index: CausalIndex;
  readonly #held = new HeldEvents();
  readonly #open = new OpenCalls();
  readonly #starter: SpanStarter;
  readonly #live: LiveUpdates | undefined;
  readonly #idOf: (event: BusEvent) => string;
  readonly #sweepIntervalMs: number;
  readonly #agent: AgentTracer;
  readonly #metrics: AgentMetrics;
  readonly #logRecords: StreamLogRecords | undefined;
  /** `true` for event types left out by `excludeEvents`; `undefined` when nothing is. */
  readonly #excluded: ((type: string) => boolean) | undefined;
  /** Start times of ended calls without invoke ids, by call key: tells a replay from a reuse. */
  readonly #endedStarts: GenerationalMap<bigint>;
  /**
   * Calls ended before their result (evicted, abandoned), by invoke id and call key. Only such
   * calls go in, so this outlives the index by far: a result that comes later is counted late,
   * never recorded as a second span with the same id.
   */
  readonly #cutShort: GenerationalMap<true>;
  readonly #unsubscribe: () => void;
  readonly #removeScope: () => void;
  #timer: NodeJS.Timeout | undefined;
  /** Subscriber clock (ms), refreshed on every invoke and every sweep. */
  #now = Date.now();
  #closed = false;
  readonly #counts = {
    spansStarted: 0,
    orphanSpans: 0,
    streamEvents: 0,
    streamEventsCoalesced: 0,
    duplicateEvents: 0,
    lateEvents: 0,
    unpairedEvents: 0,
    reusedCallIds: 0,
  };
  readonly #ended: Record<EndReason, number> = { result: 0, abandoned: 0, evicted: 0, shutdown: 0 };

  constructor(bus: EventBus, options: ResolvedOptions) {
    this.#options = options;
    const provider = options.tracerProvider ?? trace.getTracerProvider();
    const liveProvider = options.liveTracerProvider ?? provider;
    this.#providers = [provider, liveProvider];
    const onRedactError = (error: unknown): void => this.#errors.report('redact', error);
    const { maxContentBytes, redact } = options;
    this.#capture = options.captureContent
      ? new ContentCapture(maxContentBytes, redact, onRedactError)
      : undefined;
    this.#errorText = new ContentCapture(maxContentBytes, redact, onRedactError);
    // With log records only, the span keeps its stream summary and no stream span events.
    const spanEvents = options.streamEvents === 'log-records' ? 0 : options.maxStreamEvents;
    this.#settings = streamSettings(spanEvents, this.#capture);
    this.#logRecords =
      options.streamEvents === 'span-events'
        ? undefined
        : new StreamLogRecords(options.loggerProvider ?? globalLoggerProvider(), this.#capture);
    this.#index = new CausalIndex(options.maxRememberedEvents);
    const tracer = provider.getTracer('tooltrace', VERSION);
    this.#starter = new SpanStarter(
      tracer,
      options,
      { index: this.#index, open: this.#open, errors: this.#errors },
      this.#capture,
    );
    this.#live = createLiveUpdates(options, liveProvider === provider ? tracer : undefined, {
      open: this.#open,
      capture: this.#capture,
      errors: this.#errors,
    });
    this.#idOf = stableEventIdReader(options.stableEventId, this.#errors);
    this.#metrics = new AgentMetrics(options.meterProvider ?? metrics.getMeterProvider());
    this.#agent = new AgentTracer({
      options,
      metrics: this.#metrics,
      starter: this.#starter,
      index: this.#index,
      errors: this.#errors,
      capture: this.#capture,
      idOf: this.#idOf,
      openCall: (id) => this.#open.byInvokeId(id),
      filterMessage: this.#filterMessage,
    });
    this.#starter.attachAgent(this.#agent);
    this.#excluded = eventTypeFilter(options.excludeEvents);
    this.#endedStarts = new GenerationalMap(options.maxRememberedEvents);
    this.#cutShort = new GenerationalMap(options.maxRememberedEvents);
    const shortest = Math.min(options.idleTimeoutMs, options.reorderWindowMs || Infinity);
    this.#sweepIntervalMs = Math.max(10, Math.min(1000, Math.floor(shortest / 2)));
    this.#unsubscribe = bus.subscribeAll(this.#onEvent, {
      priority: FIRST,
      source: 'tooltrace.otel',
    });
    this.#removeScope = bus.addDispatchScope(this.#scopeFor);
  }

  stats(): ToolCallTracingStats {
    return {
      openSpans: this.#open.size,
      heldEvents: this.#held.eventCount,
      ...this.#counts,
      inflightUpdates: this.#live?.exported ?? 0,
      spansEnded: { ...this.#ended },
      agent: this.#agent.stats(),
      errors: { ...this.#errors.counts },
    };
  }

  /**
   * Flushes the provider(s) (when they can, or the delegate of the global proxy provider);
   * resolves even when an export fails, which is counted in `stats().errors.export`.
   */
  forceFlush(): Promise<void> {
    return flushProviders(this.#providers, (error) => this.#errors.report('export', error));
  }

  /** Stops listening, starts spans for held events, ends every open span marked `shutdown`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    this.#removeScope();
    this.#stopTimer();
    this.#live?.close();
    try {
      for (const held of this.#held.takeAll()) this.#promote(held);
      for (const call of this.#open) this.#endUnfinished(call, 'shutdown');
      this.#agent.close();
    } catch (error) {
      this.#errors.report('tracer', error);
    }
  }

  readonly #onEvent = (event: BusEvent): void => {
    try {
      const type = event.type;
      if (this.#excluded?.(type) === true) return;
      if (type === TOOL_STREAM_PARTIAL) this.#onStream(event, PARTIAL);
      else if (type === TOOL_STREAM_PROGRESS) this.#onStream(event, PROGRESS);
      else if (type === TOOL_INVOKE) this.#onInvoke(event);
      else if (type === TOOL_RESULT) this.#onResult(event);
      else this.#onOther(event);
    } catch (error) {
      this.#errors.report('tracer', error);
    }
  };

  /** Agent events become agent spans; any other event a span event where it belongs. */
  #onOther(event: BusEvent): void {
    const id = this.#idOf(event);
    // A vetoable `before:` event announces the real one, which is recorded when it comes.
    if (event.type.startsWith(BEFORE_PREFIX)) {
      if (id !== '') this.#index.rememberEvent(id, event.causation.parentId);
      return;
    }
    const now = Date.now();
    this.#now = now;
    if (!this.#agent.onEvent(event, now)) {
      if (id !== '') this.#index.rememberEvent(id, event.causation.parentId);
      this.#agent.recordBusEvent(event, now);
    } else if (
      id !== '' &&
      !this.#index.knows(id) &&
      this.#agent.openSpanContext(id) === undefined
    ) {
      // Start and end events of agent spans put themselves in the index; the rest lead on.
      this.#index.rememberEvent(id, event.causation.parentId);
    }
    if (this.#agent.openCount > 0) this.#ensureTimer();
  }

  /**
   * The scope the handlers of `event` run in: a `tool.invoke`'s handlers (the plugin that runs
   * the tool) run inside the call's span, those of an agent start event inside its span. So
   * spans that tool code starts, and the HTTP client spans auto-instrumentation makes for it,
   * are children of the span, across awaits and generator yields.
   */
  readonly #scopeFor = (event: BusEvent): ScopeRunner | undefined => {
    if (event.type === TOOL_INVOKE) {
      const id = this.#idOf(event);
      if (id !== '') return this.#open.byInvokeId(id)?.runner;
      const callId = readInvoke(event.payload).callId;
      return this.#open.pairsByCallId
        ? this.#open.byCallId(event.causation.sessionId, callId)?.runner
        : undefined;
    }
    if (event.type === TOOL_STREAM_PARTIAL || event.type === TOOL_STREAM_PROGRESS) return undefined;
    return this.#agent.scopeFor(event);
  };

  #onStream(event: BusEvent, kind: StreamKind): void {
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
    this.#recordStream(call, event, kind);
  }

  #recordStream(call: OpenCall, event: BusEvent, kind: StreamKind): void {
    const payload = event.payload as StreamPayload;
    const recorded = call.recordStream(
      kind,
      event.timeUnixNano,
      payload?.sequence,
      payload?.progress,
      payload?.payload,
      this.#now,
    );
    if (!recorded) {
      this.#counts.duplicateEvents += 1;
      return;
    }
    this.#counts.streamEvents += 1;
    const records = this.#logRecords;
    if (records === undefined) return;
    const time = event.timeUnixNano;
    records.emit(call, kind, time, payload?.sequence, payload?.progress, payload?.payload);
  }

  #onInvoke(event: BusEvent): void {
    this.#now = Date.now();
    const invokeId = this.#idOf(event);
    const fields = readInvoke(event.payload);
    const { sessionId, parentId } = event.causation;
    let open = invokeId === '' ? undefined : this.#open.byInvokeId(invokeId);
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
      if (this.#index.endedCall(invokeId) !== undefined || this.#wasCutShort(invokeId)) {
        this.#counts.duplicateEvents += 1;
        return;
      }
      // Another invoke while a call with the same call id is still open: a call of its own.
      if (open !== undefined) this.#counts.reusedCallIds += 1;
    } else {
      // Without event ids, an ended call with the same key is this very line replayed (same
      // time) or the call id used again in the session for a new call.
      const key = callKey(sessionId, fields.callId);
      const endedStart = key === '' ? undefined : this.#endedStarts.get(key);
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
          this.#options.parentContext === undefined ? contextApi.active() : ROOT_CONTEXT,
        turnId: fields.turnId,
        links: this.#agent.linksFor(sessionId, fields.callId),
      },
      false,
    );
    if (this.#held.callCount === 0) return;
    const byId = this.#held.take(invokeId);
    const byKey = this.#held.take(callKey(call.sessionId, call.callId));
    if (byId !== undefined || byKey !== undefined) {
      this.#applyHeld(call, [...(byId?.events ?? []), ...(byKey?.events ?? [])]);
    }
  }

  #onResult(event: BusEvent): void {
    const result = readResult(event.payload);
    const parentId = event.causation.parentId;
    const call =
      (parentId === '' ? undefined : this.#open.byInvokeId(parentId)) ??
      this.#open.byCallId(event.causation.sessionId, result.callId);
    if (call === undefined) this.#unmatched(event, parentId, result.callId);
    else this.#finish(call, event, result);
  }

  #finish(call: OpenCall, event: BusEvent, result: ResultFields): void {
    const resultId = this.#idOf(event);
    call.touch(event.timeUnixNano, this.#now);
    try {
      applyResult(call, result, resultId, event.timeUnixNano, this.#capture, this.#filterMessage);
    } catch (error) {
      this.#errors.report('tracer', error);
    }
    this.#close(call, 'result', event.timeUnixNano);
    // Work this result causes is the call's sibling: walks from it continue at the call's parent
    // (for a root call, an unknown result id ends the walk just as well).
    if (resultId !== '' && call.parentLink !== '') {
      this.#index.rememberEvent(resultId, call.parentLink);
    }
  }

  /** Whether the call with this invoke id or call key ended before its result. */
  #wasCutShort(key: string): boolean {
    // Calls are rarely cut short: most of the time there is nothing to look up.
    return this.#cutShort.size !== 0 && this.#cutShort.get(key) === true;
  }

  /** Records held events, in time order, on the call they were waiting for. */
  #applyHeld(call: OpenCall, events: BusEvent[]): void {
    for (const event of events.sort(byTime)) {
      try {
        if (call.ended) this.#counts.lateEvents += 1;
        else if (event.type === TOOL_RESULT) this.#finish(call, event, readResult(event.payload));
        else
          this.#recordStream(call, event, event.type === TOOL_STREAM_PARTIAL ? PARTIAL : PROGRESS);
      } catch (error) {
        this.#errors.report('tracer', error);
      }
    }
  }

  /** A stream event or result whose call is not open: late, or held until its invoke comes. */
  #unmatched(event: BusEvent, parentId: string, callId: string): void {
    const key = callKey(event.causation.sessionId, callId);
    if (
      this.#index.endedCall(parentId) !== undefined ||
      this.#index.endedCall(key) !== undefined ||
      this.#wasCutShort(parentId) ||
      this.#wasCutShort(key)
    ) {
      this.#counts.lateEvents += 1;
      return;
    }
    // A parent the index knows as a plain event is not the invoke: pair by call key instead.
    const holdKey = parentId !== '' && !this.#index.knows(parentId) ? parentId : key;
    if (holdKey === '') {
      if (event.type !== TOOL_RESULT) {
        this.#counts.unpairedEvents += 1;
        return;
      }
      this.#promote({ key: holdKey, events: [event], since: this.#now, context: ROOT_CONTEXT });
      return;
    }
    const held = this.#held.hold(holdKey, event, this.#now, contextApi.active());
    if (this.#options.reorderWindowMs === 0 || held.events.length >= MAX_HELD_PER_CALL) {
      this.#promote(this.#held.take(holdKey) ?? held);
    } else if (this.#held.callCount > MAX_HELD_CALLS) {
      const oldest = this.#held.takeOldest();
      if (oldest !== undefined) this.#promote(oldest);
    }
    this.#ensureTimer();
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
    call.invokeLate = true;
    call.touch(event.timeUnixNano, this.#now);
    call.span.setAttributes(this.#starter.invokeAttributes(event, invokeId, fields));
    if (fields.name !== '') call.rename(fields.name);
    if (invokeId !== '' && call.invokeId === '') {
      call.invokeId = invokeId;
      this.#open.indexInvokeId(call);
    }
    call.parentLink = event.causation.parentId;
  }

  #start(start: SpanStart, orphan: boolean): OpenCall {
    const oldest = this.#open.oldest;
    if (oldest !== undefined && this.#open.size >= this.#options.maxOpenSpans) {
      this.#endUnfinished(oldest, 'evicted');
    }
    const { span, parentSpanId, startTime } = this.#starter.start(start);
    const call = new OpenCall(span, start, startTime, this.#now, orphan, this.#settings);
    const agentName = start.attributes[ATTR_GEN_AI_AGENT_NAME];
    if (typeof agentName === 'string') call.agentName = agentName;
    call.parentSpanId = parentSpanId;
    call.meteredName = start.name;
    this.#agent.childStarted(parentSpanId, start.startUnixNano, this.#now);
    try {
      this.#metrics.callStarted(start.name);
    } catch (error) {
      this.#errors.report('tracer', error);
    }
    this.#open.add(call);
    this.#counts.spansStarted += 1;
    this.#ensureTimer();
    this.#live?.watch();
    return call;
  }

  /** Error messages are shown whatever the capture setting, so they are always cut and redacted. */
  readonly #filterMessage = (message: string): string =>
    this.#errorText.text(ERROR_MESSAGE_KEY, message) ?? '';

  #endUnfinished(call: OpenCall, reason: EndReason): void {
    try {
      applyUnfinished(call, reason, this.#options.idleTimeoutMs);
    } catch (error) {
      this.#errors.report('tracer', error);
    }
    this.#close(call, reason, call.lastUnixNano);
  }

  /** Ends the span; the index remembers the call as ended, for parentage and late events. */
  #close(call: OpenCall, reason: EndReason, endUnixNano: bigint): void {
    this.#open.remove(call);
    call.ended = true;
    if (call.invokeId !== '') this.#index.rememberEndedCall(call.invokeId, call.spanContext);
    // Late events can only be recognized by call key once events without invoke ids exist.
    if (call.invokeId === '' || this.#open.pairsByCallId) {
      const key = callKey(call.sessionId, call.callId);
      if (key !== '') {
        this.#index.rememberEndedCall(key, call.spanContext);
        if (call.invokeId === '') this.#endedStarts.set(key, call.startUnixNano);
      }
    }
    if (reason === 'evicted' || reason === 'abandoned') {
      if (call.invokeId !== '') this.#cutShort.set(call.invokeId, true);
      const cutKey = callKey(call.sessionId, call.callId);
      if (cutKey !== '') this.#cutShort.set(cutKey, true);
    }
    this.#agent.childStarted(call.parentSpanId, endUnixNano, this.#now);
    this.#counts.streamEventsCoalesced += call.coalescedCount;
    this.#ended[reason] += 1;
    this.#live?.finish(call);
    try {
      call.span.end(call.hrTime(endUnixNano));
      // Without a meter that records, the measurement would be built for nothing.
      if (this.#metrics.recording) {
        this.#metrics.callEnded(
          {
            toolName: call.toolName,
            agentName: call.agentName,
            startUnixNano: call.startUnixNano,
            endUnixNano,
            errorType: call.errorType,
            firstPartialUnixNano: call.firstPartialUnixNano,
            streamEvents: call.streamEventCount,
          },
          reason,
          call.meteredName,
        );
      }
    } catch (error) {
      this.#errors.report('tracer', error);
    }
    const hook = this.#options.onSpanEnd;
    if (hook === undefined) return;
    try {
      hook(call.span, reason);
    } catch (error) {
      this.#errors.report('hook', error);
    }
  }

  #ensureTimer(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#now = Date.now();
    this.#timer = setInterval(this.#sweep, this.#sweepIntervalMs);
    this.#timer.unref();
  }

  #stopTimer(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The one timer: releases held events past the window and ends calls idle too long. */
  readonly #sweep = (): void => {
    try {
      const now = (this.#now = Date.now());
      for (const held of this.#held.takeExpired(now - this.#options.reorderWindowMs)) {
        this.#promote(held);
      }
      const idleSince = now - this.#options.idleTimeoutMs;
      const busy = new Set<string>();
      for (const call of this.#open) {
        if (call.lastActivity <= idleSince) this.#endUnfinished(call, 'abandoned');
        else busy.add(call.parentSpanId);
      }
      if (this.#agent.openCount > 0) this.#agent.sweep(idleSince, busy);
      if (this.#open.size === 0 && this.#held.callCount === 0 && this.#agent.openCount === 0) {
        this.#stopTimer();
      }
    } catch (error) {
      this.#errors.report('tracer', error);
    }
  };
}
