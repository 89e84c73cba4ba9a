import {
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { VERSION } from '../../version.js';
import {
  ATTR_END_REASON,
  ATTR_EVENT_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_INFLIGHT,
  ATTR_INFLIGHT_UPDATE,
  ATTR_INFLIGHT_UPDATES,
  ATTR_STREAM_PAYLOAD,
  INFLIGHT_NAME_SUFFIX,
  toolCallAttributes,
  toolSpanName,
} from '../attribute-names.js';
import type { ContentCapture } from '../content-capture.js';
import type { DerivedIdGenerator } from '../derived-id-generator.js';
import type { ErrorReporter } from '../error-reporter.js';
import type { OpenCall } from './open-call.js';
import type { OpenCalls } from './open-calls.js';
import type { ResolvedOptions } from '../options.js';
import { inflightKey, type SnapshotState } from '../span-keys.js';

const NANOS_PER_MILLI = 1_000_000n;
/**
 * How much earlier than due a tick may come and still count as due: timers and `Date.now()`
 * tick on different clocks, and a tick that lands 1 ms "early" should not wait a whole tick.
 */
const CLOCK_SLACK_MS = 2;

/** What {@link LiveUpdates} needs from the subscriber, resolved once. */
export interface LiveUpdatesSettings {
  /** The tracer snapshots are started with (`liveTracerProvider`'s, else the main one). */
  readonly tracer: Tracer;
  /** The subscriber's open calls, iterated on every tick. */
  readonly open: OpenCalls;
  /** At most one snapshot per call per this many milliseconds. */
  readonly intervalMs: number;
  /** Content capture, or `undefined` when content is off (no payload on snapshots then). */
  readonly capture: ContentCapture | undefined;
  /**
   * Gives snapshots ids derived from their call's span id and what they show, so a replay
   * re-exports the same snapshot only when it shows the same.
   */
  readonly idGenerator: DerivedIdGenerator | undefined;
  /**
   * Whether snapshots are taken while calls run (`liveUpdates`); else only
   * {@link LiveUpdates.cut}. @default true
   */
  readonly ticking?: boolean;
  readonly errors: ErrorReporter;
}

/**
 * The subscriber's {@link LiveUpdates}, or `undefined` when `liveUpdates` is off and ids are not
 * derived (then there is no timer at all; with derived ids it is there, without a timer, for
 * the snapshots of calls cut by shutdown). Snapshots use `tracer` when they go where the call
 * spans go, else a tracer of `liveTracerProvider`.
 */
export function createLiveUpdates(
  options: ResolvedOptions,
  tracer: Tracer | undefined,
  state: Pick<LiveUpdatesSettings, 'open' | 'capture' | 'errors'>,
): LiveUpdates | undefined {
  if (!options.liveUpdates && options.idGenerator === undefined) return undefined;
  return new LiveUpdates({
    ticking: options.liveUpdates,
    ...state,
    tracer:
      tracer ??
      (options.liveTracerProvider ?? trace.getTracerProvider()).getTracer('tooltrace', VERSION),
    intervalMs: options.liveIntervalMs,
    idGenerator: options.idGenerator,
  });
}

/**
 * In-flight snapshots: makes a tool call visible in the backend while it still runs. A span is
 * exported only when it ends, so a call that streams for ten minutes would otherwise show
 * nothing for ten minutes, and nothing at all if the process dies. Every so often this exports
 * a short span that has already ended, `execute_tool {name} (in flight)`, whose parent is the
 * call's still-open span: same trace, parent span id = the id the final span will have. It
 * carries the call's identifying attributes, `tooltrace.inflight=true`, its number
 * (`tooltrace.inflight.update`), the stream summary so far and, only with content capture, the
 * latest partial payload, cut and redacted like every captured value. It starts at the call's
 * start and ends at the snapshot's time on the call's own time line: the call's start plus how
 * long the subscriber has seen it open, never before its latest event (so a replayed journal
 * gets snapshots that fit its own timestamps, not the replay's wall clock).
 *
 * One unref'd timer, ticking every quarter interval, serves every open call: a call is due its
 * first snapshot once it has been open `intervalMs`, then one per `intervalMs` when a stream
 * event came since the last (the call's existing stream counter tells; a stream event costs
 * nothing extra). The timer stops when no call is open.
 */
export class LiveUpdates {
  readonly #tracer: Tracer;
  readonly #open: OpenCalls;
  readonly #intervalMs: number;
  readonly #tickMs: number;
  readonly #capture: ContentCapture | undefined;
  readonly #idGenerator: DerivedIdGenerator | undefined;
  readonly #errors: ErrorReporter;
  #timer: NodeJS.Timeout | undefined;
  /** Closed for good, or never ticking: no timer. */
  #closed: boolean;
  #exported = 0;

  constructor(settings: LiveUpdatesSettings) {
    this.#tracer = settings.tracer;
    this.#open = settings.open;
    this.#intervalMs = settings.intervalMs;
    this.#tickMs = Math.max(1, Math.floor(settings.intervalMs / 4));
    this.#capture = settings.capture;
    this.#idGenerator = settings.idGenerator;
    this.#errors = settings.errors;
    this.#closed = settings.ticking === false;
  }

  /**
   * Exports the last snapshot of a call still open at shutdown, marked
   * `tooltrace.end_reason=shutdown` and ending at `endUnixNano`, in place of its own span (with
   * derived ids: see `SpanExit`). Its id is derived from what it shows: a later cut of the same
   * call that got further is another snapshot, never another copy of this one.
   */
  cut(call: OpenCall, endUnixNano: bigint): void {
    const update = call.liveUpdates + 1;
    const span = this.#start(call, update, endUnixNano, 'shutdown');
    span.setAttribute(ATTR_END_REASON, 'shutdown');
    span.end(call.hrTime(endUnixNano));
    call.snapshotExported();
    this.#exported += 1;
  }

  /** Snapshots exported so far (for `stats().inflightUpdates`). */
  get exported(): number {
    return this.#exported;
  }

  /** Makes sure the timer runs; the subscriber calls it whenever a call opens. */
  watch(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setInterval(this.#tick, this.#tickMs);
    this.#timer.unref();
  }

  /** Puts `tooltrace.inflight.updates` on a final span that had snapshots, before it ends. */
  finish(call: OpenCall): void {
    if (call.liveUpdates === 0) return;
    this.#errors.contain('tracer', writeUpdateCount, call);
  }

  /** Stops the timer for good: no snapshot after this. */
  close(): void {
    this.#closed = true;
    this.#stop();
  }

  readonly #tick = (): void => {
    if (this.#open.size === 0) {
      this.#stop();
      return;
    }
    const now = Date.now();
    const interval = this.#intervalMs - CLOCK_SLACK_MS;
    for (const call of this.#open) {
      if (call.snapshotDue(now, interval)) this.#snapshot(call, now);
    }
  };

  #snapshot(call: OpenCall, now: number): void {
    // Marked as done before anything can throw: a failing call is not retried every tick.
    call.snapshotAttempted(now);
    this.#errors.contain('tracer', () => this.#export(call, now));
  }

  #export(call: OpenCall, now: number): void {
    if (!call.span.isRecording()) return;
    const update = call.liveUpdates + 1;
    const end = snapshotEnd(call, now);
    const span = this.#start(call, update, end, 'running');
    span.end(call.hrTime(end));
    call.snapshotExported();
    this.#exported += 1;
  }

  #start(call: OpenCall, update: number, endUnixNano: bigint, state: SnapshotState): Span {
    const generator = this.#idGenerator;
    // The parent is valid, so the SDK draws a span id only; a trace id is never queued. The key
    // holds what the snapshot shows (how far the call got, where it ends): a replay that shows
    // the same re-exports the same span, one that shows more gets an id of its own.
    const key = inflightKey(
      call.spanContext.spanId,
      update,
      call.streamEventCount,
      endUnixNano,
      state,
    );
    generator?.queue(undefined, generator.spanIdFor(key));
    try {
      return this.#tracer.startSpan(
        `${toolSpanName(call.toolName)}${INFLIGHT_NAME_SUFFIX}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: call.hrTime(call.startUnixNano),
          attributes: this.#attributes(call, update),
        },
        trace.setSpanContext(ROOT_CONTEXT, call.spanContext),
      );
    } finally {
      generator?.clearQueue();
    }
  }

  /** What identifies the call (as on its final span), the marks, and its state so far. */
  #attributes(call: OpenCall, update: number): Attributes {
    const attributes = toolCallAttributes(
      call.toolName,
      call.callId,
      call.sessionId,
      call.agentId,
      call.agentName,
    );
    // A snapshot is not a call: without the operation name, span metrics and TraceQL `rate()`
    // over `gen_ai.operation.name=execute_tool` count each call once, by its final span.
    delete attributes[ATTR_GEN_AI_OPERATION_NAME];
    if (call.invokeId !== '') attributes[ATTR_EVENT_ID] = call.invokeId;
    attributes[ATTR_INFLIGHT] = true;
    attributes[ATTR_INFLIGHT_UPDATE] = update;
    Object.assign(attributes, call.progressAttributes());
    if (this.#capture !== undefined) {
      const text = this.#capture.text(ATTR_STREAM_PAYLOAD, call.lastPartialPayload);
      if (text !== undefined) attributes[ATTR_STREAM_PAYLOAD] = text;
    }
    return attributes;
  }

  #stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * Where a snapshot ends on the call's time line: its start plus how long the subscriber has seen
 * it open, but never before its latest event.
 */
function snapshotEnd(call: OpenCall, now: number): bigint {
  const elapsed = BigInt(Math.max(0, Math.round(now - call.openedAt))) * NANOS_PER_MILLI;
  const end = call.startUnixNano + elapsed;
  return end > call.lastUnixNano ? end : call.lastUnixNano;
}

function writeUpdateCount(call: OpenCall): void {
  call.span.setAttribute(ATTR_INFLIGHT_UPDATES, call.liveUpdates);
}
