import { metrics, trace, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { BusEvent } from '../bus/index.js';
import { DispatchedEvent } from '../bus/dispatched-event.js';
import { VERSION } from '../version.js';
import { AgentMetrics } from './agent-metrics.js';
import type { EndReason } from './attribute-names.js';
import { CausalIndex } from './causal-index.js';
import { ContentCapture, type MessageFilter } from './content-capture.js';
import { ErrorReporter } from './error-reporter.js';
import { IdleSweep } from './idle-sweep.js';
import { OpenSpans } from './open-spans.js';
import type { ResolvedOptions } from './options.js';
import { SpanOpener } from './span-opener.js';
import { stableEventIdReader } from './stable-event-id.js';
import type { ContainerSpan } from './container-span.js';
import type { OpenSpan } from './open-span.js';

/** The key the redact hook sees for error messages. */
const ERROR_MESSAGE_KEY = 'error.message';

/**
 * How an ended span leaves the subscriber: `end` ends its SDK span; `cut` (a span still open at
 * shutdown of a replay a later run resumes: the `resumable` option) exports its last in-flight snapshot, marked
 * `tooltrace.end_reason=shutdown`, in place of the span and leaves the SDK span unended: a
 * restart reads the span again and ends it under the same span id, which must then carry its
 * real end (one span id, one content).
 */
export type SpanExit = 'end' | 'cut';

/**
 * What a room (tool calls, the agent) does when one of its spans ends, around the core's part.
 * The core calls these once per span, in this order, from {@link SpanCore.end}.
 */
export interface SpanOwner<S extends OpenSpan> {
  /** Takes the ended span out of the room's own indexes and counts its end. */
  forgetEnded(span: S, reason: EndReason): void;
  /**
   * Writes the span's last attributes, ends the SDK span (or, for `cut`, exports its snapshot in
   * place of it), records its metrics (contained).
   */
  closeSpan(span: S, reason: EndReason, endUnixNano: bigint, exit: SpanExit): void;
}

/**
 * The shared core both rooms (`tool-calls/`, `agent/`) are built on: the options resolved once,
 * the error reporter every entry point contains its failures with, the causal index, the open
 * spans of both kinds, the opener that places and starts spans, the one idle sweep and its
 * clock, content capture, the metrics, and the one end-of-span path.
 */
export class SpanCore {
  readonly options: ResolvedOptions;
  readonly errors = new ErrorReporter();
  readonly index: CausalIndex;
  readonly openSpans = new OpenSpans();
  readonly opener: SpanOpener;
  readonly sweep: IdleSweep;
  readonly metrics: AgentMetrics;
  /** The tracer of the main provider (call and agent spans). */
  readonly tracer: Tracer;
  readonly provider: TracerProvider;
  /** Content capture, or `undefined` when content is off. */
  readonly capture: ContentCapture | undefined;
  /** The id the subscriber reads an event by (the `stableEventId` hook's, else the bus's). */
  readonly idOf: (event: BusEvent) => string;
  /**
   * Whether the subscriber can be sure it never saw an event with `event`'s id before: the bus
   * drew the id for it (see {@link DispatchedEvent.hasDrawnId}) and no `stableEventId` hook reads
   * ids of its own. A `tool.invoke` so marked needs no look-up among open and ended calls.
   */
  readonly isNewEvent: (event: BusEvent) => boolean;
  readonly #errorText: ContentCapture;

  /**
   * @param sweep The sweep the subscriber composes: ends what is idle at `now`, returns whether
   * anything is left to watch. Runs on the core's one timer.
   */
  constructor(options: ResolvedOptions, sweep: (now: number) => boolean) {
    this.options = options;
    this.provider = options.tracerProvider ?? trace.getTracerProvider();
    this.tracer = this.provider.getTracer('tooltrace', VERSION);
    this.index = new CausalIndex(options.maxRememberedEvents);
    this.opener = new SpanOpener(this.tracer, options, {
      index: this.index,
      openSpans: this.openSpans,
      errors: this.errors,
    });
    const shortest = Math.min(options.idleTimeoutMs, options.reorderWindowMs || Infinity);
    const intervalMs = Math.max(10, Math.min(1000, Math.floor(shortest / 2)));
    this.sweep = new IdleSweep(intervalMs, this.errors, sweep);
    this.metrics = new AgentMetrics(options.meterProvider ?? metrics.getMeterProvider());
    const onRedactError = (error: unknown): void => this.errors.report('redact', error);
    const { maxContentBytes, redact } = options;
    this.capture = options.captureContent
      ? new ContentCapture(maxContentBytes, redact, onRedactError)
      : undefined;
    this.#errorText = new ContentCapture(maxContentBytes, redact, onRedactError);
    this.idOf = stableEventIdReader(options.stableEventId, this.errors);
    this.isNewEvent =
      options.stableEventId === undefined
        ? (event: BusEvent) => DispatchedEvent.hasDrawnId(event)
        : () => false;
  }

  /** Error messages are shown whatever the capture setting, so they are always cut and redacted. */
  readonly filterMessage: MessageFilter = (message) =>
    this.#errorText.text(ERROR_MESSAGE_KEY, message) ?? '';

  /**
   * Registers a span that just started (a container also as a parent to find by span id), and
   * notes the start as activity of its parent container.
   */
  started(span: OpenSpan, startUnixNano: bigint, now: number): void {
    this.openSpans.add(span);
    this.openSpans.container(span.parentSpanId)?.childStarted(startUnixNano, now);
  }

  /** {@link SpanCore.started} for a span that holds other spans' work. */
  startedContainer(span: ContainerSpan, startUnixNano: bigint, now: number): void {
    this.openSpans.addContainer(span);
    this.openSpans.container(span.parentSpanId)?.childStarted(startUnixNano, now);
  }

  /**
   * The one end-of-span path, for both kinds. Runs once per span (the span says whether it
   * already ended), in this order, which matters: out of the core's index of open spans; its
   * start event remembered as leading to the ended span (for parentage and late events); out of
   * the room's indexes, counted; the end as activity of the parent container; the room's close
   * (last attributes, `span.end`, metrics), contained; the `onSpanEnd` hook, contained. A span
   * cut by shutdown ({@link SpanExit}) was not ended: the hook does not see it.
   */
  end<S extends OpenSpan>(
    owner: SpanOwner<S>,
    span: S,
    reason: EndReason,
    endUnixNano: bigint,
    now: number,
  ): void {
    if (!span.claimEnd()) return;
    this.openSpans.remove(span);
    if (span.startEventId !== '') this.index.rememberEndedSpan(span.startEventId, span.spanContext);
    owner.forgetEnded(span, reason);
    this.openSpans.container(span.parentSpanId)?.childEnded(endUnixNano, now);
    const exit = this.#exitFor(reason);
    this.errors.contain('tracer', () => owner.closeSpan(span, reason, endUnixNano, exit));
    const hook = this.options.onSpanEnd;
    if (hook !== undefined && exit === 'end') {
      this.errors.contain('hook', () => hook(span.span, reason));
    }
  }

  /**
   * How a span ended for `reason` leaves: cut when shutdown ends it and a later run resumes the
   * replay (`resumable`: it reads the span's end and exports it under the same derived id);
   * else ended, since nothing else ever would. Derived ids alone say nothing about a next run
   * (`--stdin`, `view`, a journal read once).
   */
  #exitFor(reason: EndReason): SpanExit {
    return reason === 'shutdown' && this.options.resumable ? 'cut' : 'end';
  }
}
