import type { BusEvent, EventBus, ScopeRunner } from '../bus/index.js';
import type { Causation } from '../bus/bus-event.js';
import { markFrameless } from '../bus/frameless-handler.js';
import { withQuickPath } from '../bus/quick-path.js';
import {
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from '../events/index.js';
import { AgentTracer } from './agent/agent-tracer.js';
import { eventTypeFilter } from './event-type-filter.js';
import { flushProviders } from './flush-provider.js';
import type { ResolvedOptions } from './options.js';
import { SpanCore } from './span-core.js';
import { ToolCallTracer } from './tool-calls/tool-call-tracer.js';
import { PARTIAL, PROGRESS } from './tool-calls/stream-sampler.js';
import type { ToolCallTracingStats } from './tracing-stats.js';

/** The prefix of a vetoable event announcing another one. */
const BEFORE_PREFIX = 'before:';

/** The subscriber runs before every other handler, so it sees a `tool.invoke` first. */
const FIRST = Number.MIN_SAFE_INTEGER;

/**
 * The subscriber behind `traceToolCalls`: builds the span core, the agent tracer on it, then the
 * tool-call tracer on it (asking the agent where calls go), and hands them the bus: one handler
 * for every event, in front of all others, and the scope the handlers of a span's start event
 * run in. Its one sweep ends idle tool calls first, then idle agent spans. Every entry point
 * contains what it throws: the bus never sees a failure.
 */
export class TracingSubscriber {
  readonly #core: SpanCore;
  readonly #agent: AgentTracer;
  readonly #toolCalls: ToolCallTracer;
  /** `true` for event types left out by `excludeEvents`; `undefined` when nothing is. */
  readonly #excluded: ((type: string) => boolean) | undefined;
  readonly #unsubscribe: () => void;
  readonly #removeScope: () => void;
  #closed = false;

  constructor(bus: EventBus, options: ResolvedOptions) {
    this.#core = new SpanCore(options, (now) => this.#sweep(now));
    this.#agent = new AgentTracer(this.#core);
    this.#toolCalls = new ToolCallTracer(this.#core, this.#agent);
    this.#excluded = eventTypeFilter(options.excludeEvents);
    this.#unsubscribe = bus.subscribeAll(this.#onEvent, {
      priority: FIRST,
      source: 'tooltrace.otel',
    });
    this.#removeScope = bus.addDispatchScope(this.#scopeFor);
    // Read on every collection, after close too: a final collection still sees the totals.
    this.#core.metrics.observeDrops(() => {
      const stats = this.#toolCalls.stats();
      return {
        late: stats.lateEvents,
        duplicate: stats.duplicateEvents,
        unpaired: stats.unpairedEvents,
        coalesced: stats.streamEventsCoalesced,
        producer: stats.streamEventsDropped,
      };
    });
  }

  stats(): ToolCallTracingStats {
    return {
      ...this.#toolCalls.stats(),
      agent: this.#agent.stats(),
      errors: { ...this.#core.errors.counts },
    };
  }

  /**
   * Flushes the provider(s) (when they can, or the delegate of the global proxy provider);
   * resolves even when an export fails, which is counted in `stats().errors.export`.
   */
  forceFlush(): Promise<void> {
    const { provider, options, errors } = this.#core;
    return flushProviders([provider, options.liveTracerProvider ?? provider], (error) =>
      errors.report('export', error),
    );
  }

  /** Stops listening, starts spans for held events, ends every open span marked `shutdown`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    this.#removeScope();
    this.#core.sweep.stop();
    this.#core.errors.contain('tracer', this.#endAll, this);
  }

  readonly #endAll = (): void => {
    this.#toolCalls.shutdown();
    this.#agent.shutdown();
  };

  // Frameless: the tracer emits nothing on the bus and starts no work of its own from an event,
  // so the bus need not enter a dispatch frame for the events only it hears (stream events).
  // Its quick path records a stream event of an open call without the bus building the event,
  // when the tracer is the event's only subscriber (`emitQuiet`, the adapters' stream events).
  readonly #onEvent = markFrameless(
    withQuickPath(
      (event: BusEvent): void => {
        this.#core.errors.contain('tracer', this.#dispatch, event);
      },
      (type, payload, causation, timeUnixNano) =>
        this.#quick(type, payload, causation, timeUnixNano),
    ),
  );

  #quick(type: string, payload: unknown, causation: Partial<Causation>, time: bigint): boolean {
    const kind =
      type === TOOL_STREAM_PARTIAL ? PARTIAL : type === TOOL_STREAM_PROGRESS ? PROGRESS : undefined;
    // A vetoable `before:` event only gets its id remembered, for events it causes; an event
    // taken here has no id, and no one else heard it to cause anything: nothing to do.
    if (kind === undefined) return type.startsWith(BEFORE_PREFIX);
    if (this.#excluded?.(type) === true) return true;
    try {
      return this.#toolCalls.quickStream(payload, causation.parentId ?? '', time, kind);
    } catch (error) {
      // As the handler's containment would: counted, reported once, never the bus's problem.
      this.#core.errors.report('tracer', error);
      return true;
    }
  }

  readonly #dispatch = (event: BusEvent): void => {
    const type = event.type;
    if (this.#excluded?.(type) === true) return;
    if (type === TOOL_STREAM_PARTIAL) this.#toolCalls.onStream(event, PARTIAL);
    else if (type === TOOL_STREAM_PROGRESS) this.#toolCalls.onStream(event, PROGRESS);
    else if (type === TOOL_INVOKE) this.#toolCalls.onInvoke(event);
    else if (type === TOOL_RESULT) this.#toolCalls.onResult(event);
    else this.#agent.onEvent(event);
  };

  /**
   * The scope the handlers of `event` run in: a `tool.invoke`'s handlers (the plugin that runs
   * the tool) run inside the call's span, those of an agent start event inside its span. So
   * spans that tool code starts, and the HTTP client spans auto-instrumentation makes for it,
   * are children of the span, across awaits and generator yields.
   */
  readonly #scopeFor = (event: BusEvent): ScopeRunner | undefined => {
    const type = event.type;
    if (type === TOOL_INVOKE) return this.#toolCalls.scopeFor(event);
    if (type === TOOL_STREAM_PARTIAL || type === TOOL_STREAM_PROGRESS) return undefined;
    return this.#agent.scopeFor(event);
  };

  /** The one sweep: tool calls (and held events) first, then agent spans; `true` while any is left. */
  #sweep(now: number): boolean {
    const idleSince = now - this.#core.options.idleTimeoutMs;
    const callsLeft = this.#toolCalls.sweepIdle(now, idleSince);
    const agentLeft = this.#agent.sweepIdle(idleSince);
    return callsLeft || agentLeft;
  }
}
