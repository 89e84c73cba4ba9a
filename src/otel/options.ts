import type { Context, MeterProvider, Span, TracerProvider } from '@opentelemetry/api';
import type { BusEvent } from '../bus/index.js';
import type { EndReason } from './attribute-names.js';
import type { DerivedIdGenerator } from './derived-id-generator.js';
import type { LoggerProviderLike } from './logger-provider.js';
import { isEventTypePattern } from './event-type-filter.js';
import { redactCredentials, type RedactHook } from './redact.js';
import type { TraceBy } from './trace-by.js';

/** Where stream events go: span events, log records, or both. */
export type StreamEventsAs = 'span-events' | 'log-records' | 'both';

/** The details of in-flight snapshots, for {@link TraceToolCallsOptions.liveUpdates}. */
export interface LiveUpdatesOptions {
  /**
   * Whether snapshots are exported.
   * @default `true`, unless `TOOLTRACE_LIVE_UPDATES` is `false`
   */
  enabled?: boolean;
  /**
   * How often an open call may be snapshotted, in milliseconds. One timer ticking every quarter
   * of it serves every call, so a snapshot is exported at most `1.25 × intervalMs` after the
   * call started or changed, plus the span processor's delay.
   * @default 1000
   */
  intervalMs?: number;
  /**
   * Where snapshots go, for instance a provider with a `SimpleSpanProcessor` or a short-delay
   * `BatchSpanProcessor` when the main one waits seconds between exports (the SDK's default
   * `OTEL_BSP_SCHEDULE_DELAY` is 5000 ms).
   * @default the `tracerProvider` option's
   */
  tracerProvider?: TracerProvider;
}

/**
 * Options for {@link traceToolCalls}: what a program tracing its own bus sets. The controls for
 * replaying events another process emitted (derived ids, stable event ids, a parent per event,
 * the reorder window) belong to `traceReplay`, which the sidecar and `tooltrace view` use.
 */
export interface TraceToolCallsOptions {
  /**
   * Where the tracer comes from. tooltrace depends on `@opentelemetry/api` only: the
   * application brings the SDK, its span processors and exporters.
   * @default the global provider (`trace.getTracerProvider()`)
   */
  tracerProvider?: TracerProvider;
  /**
   * Where the instruments come from (`gen_ai.execute_tool.duration` and the rest, see the
   * README's Metrics section). With none registered, nothing is recorded and it costs nothing.
   * @default the global provider (`metrics.getMeterProvider()`)
   */
  meterProvider?: MeterProvider;
  /**
   * How stream events are recorded. `span-events` (Jaeger and Tempo show no logs): sampled span
   * events on the call's span. `log-records`: one OpenTelemetry log record per event, named
   * `tool.stream.progress` / `tool.stream.partial` (`event.name`), in the call span's context
   * (its trace and span id), with the same attributes and content rules; the span keeps only its
   * stream summary. `both`: each.
   * @default 'span-events'
   */
  streamEvents?: StreamEventsAs;
  /**
   * Where log records go with `streamEvents` `log-records` or `both`.
   * @default the global provider (`logs.getLoggerProvider()` of `@opentelemetry/api-logs`, an
   *   optional peer dependency loaded only then)
   */
  loggerProvider?: LoggerProviderLike;
  /**
   * Record content: the call's arguments (`gen_ai.tool.call.arguments`), stream payloads
   * (`tooltrace.stream.payload` on span events) and the output (`gen_ai.tool.call.result`),
   * each cut to `maxContentBytes` and passed through `redact`. When off, none of them appears
   * anywhere.
   * @default `true` when `TOOLTRACE_CAPTURE_CONTENT` or
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`, else `false`
   */
  captureContent?: boolean;
  /**
   * The most UTF-8 bytes any captured value (and any error message) is recorded with; longer
   * text is cut on a character boundary and ends with `…`.
   * @default 4096
   */
  maxContentBytes?: number;
  /**
   * Applied to every captured value and error message, after truncation. A hook that throws
   * drops the value (it never falls back to the unredacted text); the failure is counted.
   * @default {@link redactCredentials}, which masks values that look like credentials
   */
  redact?: RedactHook;
  /**
   * The most stream events (progress and partial) one span keeps as span events; the rest are
   * coalesced into the span's stream summary. Keep it below the SDK's event limit (128 by
   * default) minus one for the exception event, so the SDK never drops any.
   * @default 64
   */
  maxStreamEvents?: number;
  /**
   * A call with no event for this long is ended, marked `tooltrace.end_reason=abandoned` with
   * status ERROR and `error.type=abandoned`. Measured on the subscriber's clock.
   * @default 300000 (5 minutes)
   */
  idleTimeoutMs?: number;
  /**
   * The most spans open at once; past it the oldest open call is ended, marked `evicted`.
   * @default 10000
   */
  maxOpenSpans?: number;
  /**
   * How many ended calls (by result, eviction, idle time or shutdown) are remembered, so an
   * event that comes after its call's span was exported is counted in `stats().lateEvents` and
   * never starts a second span: a 64-bit fingerprint per call (16 bytes; 32 at most counting the
   * two generations it rotates in), between this many and twice this many calls. Calls older
   * than that are still recognized by their bus sequence (see docs/hostile-peers.md).
   * @default 262144
   */
  maxEndedCalls?: number;
  /**
   * The most payload bytes (estimated) held for calls whose `tool.invoke` has not come yet (the
   * reorder window); past it the oldest held call starts its span without waiting, as it does
   * past 256 events or 1024 calls. Content capture keeps at most its byte limit of a payload.
   * @default 16 MiB
   */
  maxHeldBytes?: number;
  /**
   * How traces are cut. `causal-root` (the default): each agent turn is the root of its own
   * trace (all of a session's traces share `gen_ai.conversation.id`), and a call outside any turn
   * shares one trace with every call under the same root event. `session`: one trace per session
   * under a root span `session {session id}` that lasts from `io.session.start` to
   * `io.session.end`, as the Go original draws it. `call`: a trace per parentless call.
   * Grouping parentless calls (not turns) needs ids derived from the events (a
   * `DerivedIdGenerator` on the provider and in `traceReplay`'s `idGenerator`); without them
   * every parentless call starts its own trace.
   * @default 'causal-root'
   */
  traceBy?: TraceBy;
  /**
   * Export in-flight snapshots while a call runs: short, already-ended spans named
   * `execute_tool {name} (in flight)`, children of the call's final span (same trace, parent =
   * the span id the final span will have), marked `tooltrace.inflight=true`, carrying the stream
   * summary so far (and, only with content capture, the latest partial payload, cut and
   * redacted like every captured value). A call gets its first snapshot once it has been open
   * `intervalMs`, then at most one per `intervalMs` and only when a stream event came since the
   * last one; calls that end sooner get none. A boolean is short for `{ enabled }`. Off: no
   * snapshot and no timer.
   * @default `{}`: on, unless `TOOLTRACE_LIVE_UPDATES` is `false`, every 1000 ms, through
   *   `tracerProvider`
   */
  liveUpdates?: boolean | LiveUpdatesOptions;
  /**
   * The agent's name: `gen_ai.agent.name` on every span and the name of turn spans
   * (`invoke_agent {agentName}`).
   * @default the event's agent id (`causation.agentId`), else none
   */
  agentName?: string;
  /**
   * Event types to leave out of tracing entirely: exact names (`io.output`) or prefixes ending in
   * `*` (`llm.stream.*`, `plan.*`), like the Go original's `exclude_events`. Excluding
   * `tool.*` would drop tool spans too; that is allowed.
   * @default none
   */
  excludeEvents?: readonly string[];
}

/**
 * Options for `traceReplay`: {@link TraceToolCallsOptions} plus the controls of a program that
 * replays events another process emitted, as the sidecar and `tooltrace view` do (and whoever
 * embeds their pipeline): ids derived from the events, so a replay after a restart exports the
 * same ids; which event ids are stable; a parent per event (the envelope's `traceparent`); how
 * long out-of-order events wait for their invoke; how much is remembered to pair and
 * de-duplicate; a hook on every ended span.
 */
export interface ReplayTracingOptions extends TraceToolCallsOptions {
  /**
   * Gives spans ids derived from the events: pass the same instance to the provider
   * (`new BasicTracerProvider({ idGenerator })`). Replaying the same events twice then yields
   * identical trace and span ids.
   * @default none: the provider's own ids
   */
  idGenerator?: DerivedIdGenerator;
  /**
   * The parent of a call that has no causal ancestor span, for example from a W3C
   * `traceparent` carried next to the event. Returning `undefined` (or a context without a span)
   * starts a new trace.
   * @default the OpenTelemetry context active when `tool.invoke` is dispatched
   */
  parentContext?: (event: BusEvent) => Context | undefined;
  /**
   * How long stream events and results whose `tool.invoke` has not been seen yet are held
   * before they start a span of their own (marked `tooltrace.invoke.missing`).
   * @default 2000
   */
  reorderWindowMs?: number;
  /**
   * How many recent events are remembered for parentage and deduplication (twice this many at
   * most: the memory rotates in two generations).
   * @default 10000
   */
  maxRememberedEvents?: number;
  /**
   * The id that identifies an event across replays, or `''` when it has none — a sidecar reading
   * a journal without `event_id` returns `''`, so such calls are paired and given ids by their
   * tool call id instead of the id the bus made up.
   * @default the event's `id`
   */
  stableEventId?: (event: BusEvent) => string;
  /** Called after a span ended, with why. A hook that throws is counted and otherwise ignored. */
  onSpanEnd?: (span: Span, reason: EndReason) => void;
  /**
   * Whether a later run replays these events again from before the calls still open at
   * shutdown (the sidecar following a file with a checkpoint). Then `shutdown()` cuts such a
   * span: its last in-flight snapshot, marked `tooltrace.end_reason=shutdown`, is exported in its
   * place, and the span itself is left to the run that reads its end, which exports it under the
   * same span id (one span id, one content). Otherwise nothing would ever end it, so it is ended
   * and exported, marked `shutdown`. Needs `idGenerator`.
   * @default false
   */
  resumable?: boolean;
}

/** The options {@link resolveOptions} gives a default to. */
type Defaulted =
  | 'streamEvents'
  | 'captureContent'
  | 'maxContentBytes'
  | 'redact'
  | 'maxStreamEvents'
  | 'idleTimeoutMs'
  | 'maxOpenSpans'
  | 'maxEndedCalls'
  | 'maxHeldBytes'
  | 'traceBy'
  | 'reorderWindowMs'
  | 'maxRememberedEvents'
  | 'agentName'
  | 'excludeEvents'
  | 'resumable';

/**
 * {@link ReplayTracingOptions} with every default applied and checked, resolved once; the
 * `liveUpdates` object flattened.
 */
export type ResolvedOptions = Readonly<
  Omit<ReplayTracingOptions, Defaulted | 'liveUpdates'> &
    Required<Pick<ReplayTracingOptions, Defaulted>> & {
      liveUpdates: boolean;
      liveIntervalMs: number;
      liveTracerProvider: TracerProvider | undefined;
    }
>;

const TRACE_BY: readonly TraceBy[] = ['causal-root', 'session', 'call'];

/** Environment variables that turn content capture on when `captureContent` is not given. */
const CAPTURE_VARIABLES = [
  'TOOLTRACE_CAPTURE_CONTENT',
  'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
] as const;

/** The environment variable that turns live updates off (`false`) when `liveUpdates` is not given. */
const LIVE_UPDATES_VARIABLE = 'TOOLTRACE_LIVE_UPDATES';

/**
 * Applies the defaults and checks every option; throws a `TypeError` (or a `RangeError` for a
 * number out of range) naming the bad one, as for any argument the calling code got wrong. `caller` names the function the options were given to: `traceToolCalls` reads only
 * {@link TraceToolCallsOptions}; the replay controls are `traceReplay`'s.
 */
export function resolveOptions(
  options: ReplayTracingOptions,
  caller: 'traceToolCalls' | 'traceReplay',
  environment: NodeJS.ProcessEnv = process.env,
): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${caller} options must be an object`);
  }
  const replay: Omit<ReplayTracingOptions, keyof TraceToolCallsOptions> =
    caller === 'traceReplay' ? options : {};
  const traceBy = options.traceBy ?? 'causal-root';
  if (!TRACE_BY.includes(traceBy)) {
    throw new TypeError(
      `options.traceBy must be one of ${TRACE_BY.join(', ')}, got ${JSON.stringify(traceBy)}`,
    );
  }
  const captureContent = options.captureContent ?? captureFromEnvironment(environment);
  if (typeof captureContent !== 'boolean') {
    throw new TypeError('options.captureContent must be a boolean');
  }
  const resumable = replay.resumable ?? false;
  if (typeof resumable !== 'boolean') {
    throw new TypeError('options.resumable must be a boolean');
  }
  if (resumable && replay.idGenerator === undefined) {
    throw new TypeError(
      'options.resumable needs options.idGenerator: a later run ends a cut span under the same span id only with ids derived from the events',
    );
  }
  const live = checkLiveUpdates(options.liveUpdates);
  const liveUpdates = live.enabled ?? liveUpdatesFromEnvironment(environment);
  if (typeof liveUpdates !== 'boolean') {
    throw new TypeError('options.liveUpdates.enabled must be a boolean');
  }
  return {
    tracerProvider: checkObject(options.tracerProvider, 'tracerProvider'),
    meterProvider: checkObject(options.meterProvider, 'meterProvider'),
    streamEvents: checkStreamEvents(options.streamEvents),
    loggerProvider: checkObject(options.loggerProvider, 'loggerProvider'),
    captureContent,
    maxContentBytes: checkInteger(options.maxContentBytes, 'maxContentBytes', 4096, 16),
    redact: checkFunction(options.redact, 'redact') ?? redactCredentials,
    maxStreamEvents: checkInteger(options.maxStreamEvents, 'maxStreamEvents', 64, 0),
    idleTimeoutMs: checkInteger(options.idleTimeoutMs, 'idleTimeoutMs', 300_000, 1),
    maxOpenSpans: checkInteger(options.maxOpenSpans, 'maxOpenSpans', 10_000, 1),
    maxEndedCalls: checkInteger(options.maxEndedCalls, 'maxEndedCalls', 262_144, 1),
    maxHeldBytes: checkInteger(options.maxHeldBytes, 'maxHeldBytes', 16 * 1024 * 1024, 0),
    traceBy,
    idGenerator: checkObject(replay.idGenerator, 'idGenerator'),
    parentContext: checkFunction(replay.parentContext, 'parentContext'),
    reorderWindowMs: checkInteger(replay.reorderWindowMs, 'reorderWindowMs', 2000, 0),
    maxRememberedEvents: checkInteger(
      options.maxRememberedEvents,
      'maxRememberedEvents',
      10_000,
      1,
    ),
    stableEventId: checkFunction(replay.stableEventId, 'stableEventId'),
    onSpanEnd: checkFunction(replay.onSpanEnd, 'onSpanEnd'),
    resumable,
    liveUpdates,
    liveIntervalMs: checkInteger(live.intervalMs, 'liveUpdates.intervalMs', 1000, 10),
    liveTracerProvider: checkObject(live.tracerProvider, 'liveUpdates.tracerProvider'),
    agentName: checkString(options.agentName, 'agentName'),
    excludeEvents: checkPatterns(options.excludeEvents),
  };
}

/** The `liveUpdates` option as its object form (a boolean is short for `{ enabled }`). */
function checkLiveUpdates(value: unknown): LiveUpdatesOptions {
  if (value === undefined) return {};
  if (typeof value === 'boolean') return { enabled: value };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(
      'options.liveUpdates must be a boolean or an object ({ enabled, intervalMs, tracerProvider })',
    );
  }
  return value;
}

function liveUpdatesFromEnvironment(environment: NodeJS.ProcessEnv): boolean {
  return environment[LIVE_UPDATES_VARIABLE]?.trim().toLowerCase() !== 'false';
}

function captureFromEnvironment(environment: NodeJS.ProcessEnv): boolean {
  return CAPTURE_VARIABLES.some((name) => environment[name]?.trim().toLowerCase() === 'true');
}

function checkInteger(value: unknown, name: string, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
    throw new RangeError(
      `options.${name} must be an integer >= ${minimum}, got ${JSON.stringify(value) ?? typeof value}`,
    );
  }
  return value;
}

const STREAM_EVENTS_AS: readonly StreamEventsAs[] = ['span-events', 'log-records', 'both'];

function checkStreamEvents(value: unknown): StreamEventsAs {
  if (value === undefined) return 'span-events';
  if (!STREAM_EVENTS_AS.includes(value as StreamEventsAs)) {
    throw new TypeError(
      `options.streamEvents must be one of ${STREAM_EVENTS_AS.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as StreamEventsAs;
}

function checkString(value: unknown, name: string): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') {
    throw new TypeError(`options.${name} must be a string, got ${typeof value}`);
  }
  return value;
}

function checkPatterns(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new TypeError('options.excludeEvents must be an array of event types');
  }
  for (const [index, pattern] of value.entries()) {
    if (!isEventTypePattern(pattern)) {
      throw new TypeError(
        `options.excludeEvents[${index}] must be an event type or a prefix ending in *, got ${JSON.stringify(pattern)}`,
      );
    }
  }
  return [...(value as string[])];
}

function checkFunction<T>(value: T | undefined, name: string): T | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`options.${name} must be a function`);
  }
  return value;
}

function checkObject<T>(value: T | undefined, name: string): T | undefined {
  if (value !== undefined && (value === null || typeof value !== 'object')) {
    throw new TypeError(`options.${name} must be an object`);
  }
  return value;
}
