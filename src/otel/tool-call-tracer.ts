import {
  ROOT_CONTEXT,
  SpanKind,
  context as contextApi,
  diag,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { BusEvent, EventBus } from '../bus/index.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  type ToolStreamProgress,
} from '../events/index.js';
import { VERSION } from '../version.js';
import {
  ATTR_DEPTH,
  ATTR_EVENT_ID,
  ATTR_EVENT_PARENT_ID,
  ATTR_EVENT_SEQUENCE,
  ATTR_EVENT_SOURCE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_PARENT_CALL_ID,
  ATTR_TURN_ID,
  EXECUTE_TOOL,
  TOOL_TYPE_FUNCTION,
  type EndReason,
} from './attribute-names.js';
import { CausalIndex, type CallRecord } from './causal-index.js';
import { ContentCapture } from './content-capture.js';
import { ErrorReporter } from './error-reporter.js';
import { HeldEvents, type HeldCall } from './held-events.js';
import { hrTimeFromUnixNano } from './hr-time.js';
import { OpenCall, type StreamSettings } from './open-call.js';
import type { ResolvedOptions } from './options.js';
import { applyResult, applyUnfinished } from './span-outcome.js';
import { PARTIAL, PROGRESS, type StreamKind } from './stream-sampler.js';
import type { ToolCallTracingStats } from './tracing-stats.js';
import {
  callKeyOf,
  readInvoke,
  readResult,
  streamCallId,
  streamToolName,
  type InvokeFields,
  type ResultFields,
} from './tool-payloads.js';

/** Held events of one call past this many start its span without waiting for the invoke. */
const MAX_HELD_PER_CALL = 256;
/** Calls held at once past this many: the oldest starts its span without waiting. */
const MAX_HELD_CALLS = 1024;
/** The subscriber runs before every other handler, so it sees a `tool.invoke` first. */
const FIRST = Number.MIN_SAFE_INTEGER;
/** The key the redact hook sees for error messages. */
const ERROR_MESSAGE_KEY = 'error.message';

/** What a span is started from: a `tool.invoke`, or (for an orphan) held events. */
interface SpanStart {
  readonly name: string;
  readonly invokeId: string;
  readonly callKey: string;
  readonly parentId: string;
  readonly sessionId: string;
  readonly startUnixNano: bigint;
  readonly attributes: Attributes;
  readonly parentCallId: string;
  /** The event the `parentContext` hook is asked about. */
  readonly event: BusEvent;
  /** The context to use when there is no causal ancestor span and no hook. */
  readonly activeContext: Context;
  readonly orphan: boolean;
}

/**
 * The subscriber behind {@link traceToolCalls}: one handler for every bus event, in front of
 * all others. Tool spans are found by invoke event id (hot path: stream events carry it as
 * their causal parent) or by call key; recent events are remembered in a bounded
 * {@link CausalIndex} for parentage; one unref'd sweep timer ends idle calls and releases held
 * events. Every entry point catches what it throws, so the bus never sees a failure.
 */
export class ToolCallTracer {
  readonly #options: ResolvedOptions;
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;
  readonly #settings: StreamSettings;
  readonly #capture: ContentCapture | undefined;
  readonly #errorText: ContentCapture;
  readonly #errors = new ErrorReporter();
  readonly #index: CausalIndex;
  readonly #held = new HeldEvents();
  /** Open calls in start order: the first is the one eviction ends. */
  readonly #open = new Set<OpenCall>();
  readonly #openByInvokeId = new Map<string, OpenCall>();
  readonly #openByCallKey = new Map<string, OpenCall>();
  readonly #sweepIntervalMs: number;
  readonly #unsubscribe: () => void;
  #timer: NodeJS.Timeout | undefined;
  /** Subscriber clock (ms), refreshed on every invoke and every sweep. */
  #now = Date.now();
  #closed = false;
  #idGeneratorChecked = false;
  readonly #counts = {
    spansStarted: 0,
    orphanSpans: 0,
    streamEvents: 0,
    streamEventsCoalesced: 0,
    duplicateEvents: 0,
    lateEvents: 0,
    unpairedEvents: 0,
  };
  readonly #ended: Record<EndReason, number> = { result: 0, abandoned: 0, evicted: 0, shutdown: 0 };

  constructor(bus: EventBus, options: ResolvedOptions) {
    this.#options = options;
    this.#provider = options.tracerProvider ?? trace.getTracerProvider();
    this.#tracer = this.#provider.getTracer('tooltrace', VERSION);
    const onRedactError = (error: unknown): void => this.#errors.report('redact', error);
    this.#capture = options.captureContent
      ? new ContentCapture(options.maxContentBytes, options.redact, onRedactError)
      : undefined;
    this.#errorText = new ContentCapture(options.maxContentBytes, options.redact, onRedactError);
    const max = options.maxStreamEvents;
    const headSize = Math.floor(max / 4);
    this.#settings = {
      headSize,
      middleSize: Math.max(0, max - headSize - 1),
      keepLast: max - headSize >= 1,
      capture: this.#capture,
    };
    this.#index = new CausalIndex(options.maxRememberedEvents);
    const shortest = Math.min(options.idleTimeoutMs, options.reorderWindowMs || Infinity);
    this.#sweepIntervalMs = Math.max(10, Math.min(1000, Math.floor(shortest / 2)));
    this.#unsubscribe = bus.subscribeAll(this.#onEvent, {
      priority: FIRST,
      source: 'tooltrace.otel',
    });
  }

  stats(): ToolCallTracingStats {
    return {
      openSpans: this.#open.size,
      heldEvents: this.#held.eventCount,
      ...this.#counts,
      spansEnded: { ...this.#ended },
      errors: { ...this.#errors.counts },
    };
  }

  /** Flushes the provider (when it can), so spans that ended are exported. */
  async forceFlush(): Promise<void> {
    type Flushable = { forceFlush?: () => Promise<void>; getDelegate?: () => TracerProvider };
    const provider = this.#provider as Flushable;
    const target =
      typeof provider.forceFlush === 'function'
        ? provider
        : (provider.getDelegate?.() as Flushable | undefined);
    if (typeof target?.forceFlush === 'function') await target.forceFlush();
  }

  /** Stops listening, starts spans for held events, ends every open span marked `shutdown`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    this.#stopTimer();
    try {
      for (const held of this.#held.takeAll()) this.#promote(held);
      for (const call of [...this.#open]) this.#endUnfinished(call, 'shutdown');
    } catch (error) {
      this.#errors.report('tracer', error);
    }
  }

  readonly #onEvent = (event: BusEvent): void => {
    try {
      const type = event.type;
      if (type === TOOL_STREAM_PARTIAL) this.#onStream(event, PARTIAL);
      else if (type === TOOL_STREAM_PROGRESS) this.#onStream(event, PROGRESS);
      else if (type === TOOL_INVOKE) this.#onInvoke(event);
      else if (type === TOOL_RESULT) this.#onResult(event);
      else this.#onOther(event);
    } catch (error) {
      this.#errors.report('tracer', error);
    }
  };

  #onOther(event: BusEvent): void {
    const id = this.#idOf(event);
    if (id !== '') this.#index.rememberEvent(id, event.causation.parentId);
  }

  #onStream(event: BusEvent, kind: StreamKind): void {
    const payload = event.payload as Partial<ToolStreamProgress> | null | undefined;
    const parentId = event.causation.parentId;
    let call = parentId === '' ? undefined : this.#openByInvokeId.get(parentId);
    if (call === undefined) {
      const callKey = callKeyOf(event.causation.sessionId, streamCallId(payload));
      if (callKey !== '') call = this.#openByCallKey.get(callKey);
      if (call === undefined) {
        this.#unmatched(event, parentId, callKey);
        return;
      }
    }
    this.#recordStream(call, event, kind);
  }

  #recordStream(call: OpenCall, event: BusEvent, kind: StreamKind): void {
    const payload = event.payload as Partial<ToolStreamProgress> | null | undefined;
    const recorded = call.recordStream(
      kind,
      event.timeUnixNano,
      payload?.sequence,
      payload?.progress,
      payload?.payload,
      this.#now,
    );
    if (recorded) this.#counts.streamEvents += 1;
    else this.#counts.duplicateEvents += 1;
  }

  #onInvoke(event: BusEvent): void {
    this.#now = Date.now();
    const invokeId = this.#idOf(event);
    const fields = readInvoke(event.payload);
    const causation = event.causation;
    const callKey = callKeyOf(causation.sessionId, fields.callId);
    const open =
      (invokeId === '' ? undefined : this.#openByInvokeId.get(invokeId)) ??
      (callKey === '' ? undefined : this.#openByCallKey.get(callKey));
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
    const seen =
      invokeId !== ''
        ? this.#index.callRecord(invokeId) !== undefined
        : this.#index.callRecord(callKey)?.ended === true;
    if (seen) {
      this.#counts.duplicateEvents += 1;
      return;
    }
    const call = this.#start({
      name: fields.name,
      invokeId,
      callKey,
      parentId: causation.parentId,
      sessionId: causation.sessionId,
      startUnixNano: event.timeUnixNano,
      attributes: this.#invokeAttributes(event, invokeId, fields),
      parentCallId: fields.parentCallId,
      event,
      activeContext: contextApi.active(),
      orphan: false,
    });
    const byId = this.#held.take(invokeId);
    const byKey = this.#held.take(callKey);
    if (byId !== undefined || byKey !== undefined) {
      this.#applyHeld(call, [...(byId?.events ?? []), ...(byKey?.events ?? [])]);
    }
  }

  #onResult(event: BusEvent): void {
    const result = readResult(event.payload);
    const parentId = event.causation.parentId;
    const callKey = callKeyOf(event.causation.sessionId, result.callId);
    const call =
      (parentId === '' ? undefined : this.#openByInvokeId.get(parentId)) ??
      (callKey === '' ? undefined : this.#openByCallKey.get(callKey));
    if (call === undefined) this.#unmatched(event, parentId, callKey);
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
    // Work this result causes is the call's sibling: walks from it continue at the call's parent.
    if (resultId !== '') this.#index.rememberEvent(resultId, call.parentLink);
  }

  /** Records held events, in time order, on the call they were waiting for. */
  #applyHeld(call: OpenCall, events: BusEvent[]): void {
    for (const event of events.sort(byTime)) {
      try {
        if (call.record.ended) this.#counts.lateEvents += 1;
        else if (event.type === TOOL_RESULT) this.#finish(call, event, readResult(event.payload));
        else
          this.#recordStream(call, event, event.type === TOOL_STREAM_PARTIAL ? PARTIAL : PROGRESS);
      } catch (error) {
        this.#errors.report('tracer', error);
      }
    }
  }

  /** A stream event or result whose call is not open: late, or held until its invoke comes. */
  #unmatched(event: BusEvent, parentId: string, callKey: string): void {
    if (
      (parentId !== '' && this.#index.callRecord(parentId)?.ended === true) ||
      (callKey !== '' && this.#index.callRecord(callKey)?.ended === true)
    ) {
      this.#counts.lateEvents += 1;
      return;
    }
    // A parent the index knows as a plain event is not the invoke: pair by call key instead.
    const key = parentId !== '' && !this.#index.knows(parentId) ? parentId : callKey;
    if (key === '') {
      if (event.type !== TOOL_RESULT) {
        this.#counts.unpairedEvents += 1;
        return;
      }
      this.#promote({ key, events: [event], since: this.#now, context: contextApi.active() });
      return;
    }
    const held = this.#held.hold(key, event, this.#now, contextApi.active());
    if (this.#options.reorderWindowMs === 0 || held.events.length >= MAX_HELD_PER_CALL) {
      this.#promote(this.#held.take(key) ?? held);
    } else if (this.#held.callCount > MAX_HELD_CALLS) {
      const oldest = this.#held.takeOldest();
      if (oldest !== undefined) this.#promote(oldest);
    }
    this.#ensureTimer();
  }

  /** Starts a span for held events whose invoke never came, then records them on it. */
  #promote(held: HeldCall): void {
    const events = held.events.sort(byTime);
    const first = events[0];
    if (first === undefined) return;
    const isResult = first.type === TOOL_RESULT;
    const result = events.find((event) => event.type === TOOL_RESULT);
    const name =
      (isResult ? readResult(first.payload).name : streamToolName(first.payload)) ||
      (result === undefined ? '' : readResult(result.payload).name);
    const callId = isResult ? readResult(first.payload).callId : streamCallId(first.payload);
    const parentId = first.causation.parentId;
    const callKey = callKeyOf(first.causation.sessionId, callId);
    const attributes = this.#commonAttributes(first, callId, name);
    const turnId = (first.payload as { turn_id?: unknown } | null | undefined)?.turn_id;
    if (typeof turnId === 'string' && turnId !== '') attributes[ATTR_TURN_ID] = turnId;
    const call = this.#start({
      name,
      invokeId: held.key === callKey ? '' : held.key,
      callKey,
      parentId: held.key === callKey ? parentId : '',
      sessionId: first.causation.sessionId,
      startUnixNano: first.timeUnixNano,
      attributes,
      parentCallId: '',
      event: first,
      activeContext: held.context,
      orphan: true,
    });
    this.#counts.orphanSpans += 1;
    this.#applyHeld(call, events);
  }

  #attachLateInvoke(call: OpenCall, event: BusEvent, invokeId: string, fields: InvokeFields): void {
    call.invokeLate = true;
    call.touch(event.timeUnixNano, this.#now);
    call.span.setAttributes(this.#invokeAttributes(event, invokeId, fields));
    if (fields.name !== '') call.span.updateName(`${EXECUTE_TOOL} ${fields.name}`);
    if (invokeId !== '' && call.invokeId === '') {
      call.invokeId = invokeId;
      this.#openByInvokeId.set(invokeId, call);
      this.#index.rememberCall(invokeId, call.record);
    }
    call.parentLink = event.causation.parentId;
  }

  #start(start: SpanStart): OpenCall {
    if (this.#open.size >= this.#options.maxOpenSpans) {
      const oldest = this.#open.values().next();
      if (oldest.done !== true) this.#endUnfinished(oldest.value, 'evicted');
    }
    const selfKey = start.invokeId !== '' ? start.invokeId : start.callKey;
    const ancestry = this.#index.ancestry(start.parentId, selfKey, this.#openSpanContext);
    let parent: SpanContext | undefined = ancestry.parent;
    if (parent === undefined && start.parentCallId !== '') {
      parent = this.#openByCallKey.get(callKeyOf(start.sessionId, start.parentCallId))?.record
        .spanContext;
    }
    const parentContext =
      parent !== undefined
        ? trace.setSpanContext(ROOT_CONTEXT, parent)
        : this.#fallbackParent(start);
    const generator = this.#options.idGenerator;
    let spanId: string | undefined;
    if (generator !== undefined && selfKey !== '') {
      spanId = generator.spanIdFor(selfKey);
      const root = !isSpanContextValid(trace.getSpanContext(parentContext) ?? INVALID);
      generator.queue(
        root ? generator.traceIdFor(this.#traceKey(start, selfKey, ancestry.rootId)) : undefined,
        spanId,
      );
    }
    let span;
    try {
      span = this.#tracer.startSpan(
        start.name === '' ? EXECUTE_TOOL : `${EXECUTE_TOOL} ${start.name}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: hrTimeFromUnixNano(start.startUnixNano),
          attributes: start.attributes,
        },
        parentContext,
      );
    } finally {
      generator?.clearQueue();
    }
    if (spanId !== undefined)
      this.#checkIdGenerator(span.spanContext().spanId, spanId, span.isRecording());
    const record: CallRecord = { spanContext: span.spanContext(), ended: false };
    const call = new OpenCall(
      span,
      record,
      { invokeId: start.invokeId, callKey: start.callKey, parentLink: start.parentId },
      start.startUnixNano,
      this.#now,
      start.orphan,
      this.#settings,
    );
    this.#open.add(call);
    if (start.invokeId !== '') {
      this.#openByInvokeId.set(start.invokeId, call);
      this.#index.rememberCall(start.invokeId, record);
    }
    if (start.callKey !== '') {
      this.#openByCallKey.set(start.callKey, call);
      this.#index.rememberCall(start.callKey, record);
    }
    this.#counts.spansStarted += 1;
    this.#ensureTimer();
    return call;
  }

  #fallbackParent(start: SpanStart): Context {
    const hook = this.#options.parentContext;
    if (hook === undefined) return start.activeContext;
    try {
      return hook(start.event) ?? ROOT_CONTEXT;
    } catch (error) {
      this.#errors.report('hook', error);
      return ROOT_CONTEXT;
    }
  }

  #traceKey(start: SpanStart, selfKey: string, rootId: string): string {
    const traceBy = this.#options.traceBy;
    if (traceBy === 'call') return `call\u0000${selfKey}`;
    if (traceBy === 'session' && start.sessionId !== '') return `session\u0000${start.sessionId}`;
    return `root\u0000${rootId}`;
  }

  #checkIdGenerator(actual: string, queued: string, recording: boolean): void {
    if (this.#idGeneratorChecked || !recording) return;
    this.#idGeneratorChecked = true;
    if (actual !== queued) {
      diag.warn(
        'tooltrace: options.idGenerator is not the id generator of the tracer provider; ' +
          'pass the same DerivedIdGenerator to both, or span ids will not be derived',
      );
    }
  }

  readonly #openSpanContext = (id: string): SpanContext | undefined =>
    this.#openByInvokeId.get(id)?.record.spanContext;

  #invokeAttributes(event: BusEvent, invokeId: string, fields: InvokeFields): Attributes {
    const attributes = this.#commonAttributes(event, fields.callId, fields.name);
    const causation = event.causation;
    if (invokeId !== '') attributes[ATTR_EVENT_ID] = invokeId;
    if (causation.parentId !== '') attributes[ATTR_EVENT_PARENT_ID] = causation.parentId;
    attributes[ATTR_EVENT_SEQUENCE] = causation.sequence;
    if (event.source !== undefined && event.source !== '')
      attributes[ATTR_EVENT_SOURCE] = event.source;
    if (fields.turnId !== '') attributes[ATTR_TURN_ID] = fields.turnId;
    if (fields.parentCallId !== '') attributes[ATTR_PARENT_CALL_ID] = fields.parentCallId;
    if (this.#capture !== undefined && fields.arguments !== undefined) {
      const text = this.#capture.text(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, fields.arguments);
      if (text !== undefined) attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = text;
    }
    return attributes;
  }

  #commonAttributes(event: BusEvent, callId: string, name: string): Attributes {
    const causation = event.causation;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: name,
      [ATTR_GEN_AI_TOOL_TYPE]: TOOL_TYPE_FUNCTION,
    };
    if (callId !== '') attributes[ATTR_GEN_AI_TOOL_CALL_ID] = callId;
    if (causation.sessionId !== '') attributes[ATTR_GEN_AI_CONVERSATION_ID] = causation.sessionId;
    if (causation.agentId !== '') attributes[ATTR_GEN_AI_AGENT_ID] = causation.agentId;
    attributes[ATTR_DEPTH] = causation.depth;
    return attributes;
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

  /** Ends the span and forgets the call as open; the index keeps it as ended. */
  #close(call: OpenCall, reason: EndReason, endUnixNano: bigint): void {
    this.#open.delete(call);
    if (call.invokeId !== '' && this.#openByInvokeId.get(call.invokeId) === call) {
      this.#openByInvokeId.delete(call.invokeId);
    }
    if (call.callKey !== '' && this.#openByCallKey.get(call.callKey) === call) {
      this.#openByCallKey.delete(call.callKey);
    }
    call.record.ended = true;
    this.#counts.streamEventsCoalesced += call.coalescedCount;
    this.#ended[reason] += 1;
    try {
      call.span.end(hrTimeFromUnixNano(endUnixNano));
    } catch (error) {
      this.#errors.report('tracer', error);
    }
    const hook = this.#options.onSpanEnd;
    if (hook !== undefined) {
      try {
        hook(call.span, reason);
      } catch (error) {
        this.#errors.report('hook', error);
      }
    }
  }

  #idOf(event: BusEvent): string {
    const hook = this.#options.stableEventId;
    if (hook === undefined) return event.id;
    try {
      const id = hook(event);
      return typeof id === 'string' ? id : '';
    } catch (error) {
      this.#errors.report('hook', error);
      return '';
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
      for (const call of this.#open) {
        if (call.lastActivity <= idleSince) this.#endUnfinished(call, 'abandoned');
      }
      if (this.#open.size === 0 && this.#held.callCount === 0) this.#stopTimer();
    } catch (error) {
      this.#errors.report('tracer', error);
    }
  };
}

const INVALID: SpanContext = { traceId: '', spanId: '', traceFlags: 0 };

function byTime(left: BusEvent, right: BusEvent): number {
  return left.timeUnixNano < right.timeUnixNano
    ? -1
    : left.timeUnixNano > right.timeUnixNano
      ? 1
      : 0;
}
