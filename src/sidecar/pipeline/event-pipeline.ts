import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { newEventId, type BusEvent, type EventBus, type EventInit } from '../../bus/index.js';
import { ATTR_END_REASON, ATTR_INFLIGHT, callKey, GenerationalMap } from '../../otel/internal.js';
import {
  IO_SESSION_START,
  type SessionStart,
  TOOL_INVOKE,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from '../../events/index.js';
import {
  decodeEnvelope,
  lineTooLarge,
  LineSplitter,
  parseTraceparent,
  type DecodeFailure,
  type DecodeOptions,
  type DecodeSuccess,
} from '../../wire/index.js';
import type { CheckpointTracker } from './checkpoint-tracker.js';
import { scopedEventId, scopedSession, unscopedSession } from './client-scope.js';
import { RecentKeys } from './recent-keys.js';
import { RejectedLines } from './rejected-lines.js';
import type { IntakeOutcome } from './intake-outcome.js';
import type { SidecarMetrics } from './sidecar-metrics.js';

/** How many made-up event ids and `traceparent`s are remembered (ids seen lately: half as many). */
const MAX_REMEMBERED = 100_000;

/** Options for {@link EventPipeline}. */
export interface EventPipelineOptions {
  bus: EventBus;
  metrics: SidecarMetrics;
  maxLineBytes: number;
  /** Where a client's first reuse of an id is reported. @default nowhere */
  log?: (line: string) => void;
}

/** What one source feeds: a splitter bound to it, and the checkpoint tracker of a file. */
export interface LineSource {
  /** Feeds the next raw bytes of the stream. */
  push(chunk: Uint8Array): void;
  /** Delivers a final line without newline. */
  end(): void;
}

/** How {@link EventPipeline}'s one line path reads a source. */
interface LineHooks {
  /** A followed file's checkpoint tracker (see {@link EventPipeline.source}). */
  tracker?: CheckpointTracker | undefined;
  /** The HTTP client the lines come from: their ids and sessions are scoped to it. @default '' */
  client?: string;
  /** Where rejected lines are logged, and what follows a line's number there. */
  rejectedLines: RejectedLines;
  ofWhat?: string;
  /** Asked before each line: `true` leaves it unread (an HTTP body past a full queue). */
  skip?: () => boolean;
  /** Each line but a blank one: its number, and why it was rejected (counted and logged). */
  onLine?: ((lineNumber: number, failure: DecodeFailure | undefined) => void) | undefined;
}

/** The line being replayed, while its spans start. */
interface Dispatch {
  tracker: CheckpointTracker | undefined;
  root: number;
}

/**
 * Bytes of a request body replayed between two turns of the event loop (about 100 lines): a
 * slice takes about a millisecond, so a probe waits a few of them at most, even on a machine
 * whose cores are shared.
 */
export const BODY_SLICE_BYTES = 16 * 1024;

/** What a span is pinned under in its tracker: not the span, which may then die young. */
interface PinReceipt {
  readonly tracker: CheckpointTracker;
}

/** A line from a source without checkpoint (stdin, HTTP): its spans pin nothing. */
const UNTRACKED: Dispatch = { tracker: undefined, root: 0 };

/**
 * Turns NDJSON lines into events on the sidecar's own bus: decode (every rejection counted by
 * reason), replay with `emitEvent`, and — for a followed file — tell its
 * {@link CheckpointTracker} which line each span depends on. A span starts synchronously while
 * the line that caused it is being replayed, so {@link spanStarted} pins it at that line's root;
 * {@link spanExported} releases it.
 */
export class EventPipeline {
  readonly #bus: EventBus;
  readonly #metrics: SidecarMetrics;
  readonly #decodeOptions: DecodeOptions;
  readonly #maxLineBytes: number;
  /** Ids the sidecar made up for lines without `event_id`: they identify nothing across replays. */
  readonly #synthetic: GenerationalMap<true>;
  /** Whether any id was ever made up: journals with event ids skip the lookups. */
  #syntheticCount = 0;
  /** Parents from envelope `traceparent`s, by invoke event id, taken once. */
  readonly #traceparents = new Map<string, Context>();
  /** The line being replayed; `undefined` between lines (a timer releasing held events). */
  #dispatch: Dispatch | undefined;
  #replaying = false;
  /** Where spans started outside any line are pinned: the checkpointed file, if any. */
  #fallbackTracker: CheckpointTracker | undefined;
  /** The receipt each pinned span, not ended yet, is pinned under. */
  readonly #pinned = new WeakMap<object, PinReceipt>();
  /**
   * The session last started (`io.session.start`) on each source: lines of that source without a
   * `session_id` belong to it, as in a Nexus journal, where only that event names the session.
   */
  readonly #sessions = new Map<string, string>();
  /**
   * Event ids seen lately, per client (a source name or an HTTP client), to count reuse. Kept
   * apart per client rather than under a client-prefixed key: the id string the line brought is
   * the key as it is, with no new string built and hashed for every line.
   */
  readonly #eventIds = new Map<string, RecentKeys>();
  /** (session, tool call id) pairs of invokes seen lately, to count reuse. */
  readonly #callKeys: RecentKeys;
  /** Who was told about a reuse already (`kind` + client): once each. */
  readonly #reuseReported = new Set<string>();
  readonly #log: (line: string) => void;
  /** Each HTTP client's rejected-line log: clients are the configured tokens, a bounded set. */
  readonly #rejectedByClient = new Map<string, RejectedLines>();

  constructor(options: EventPipelineOptions) {
    this.#bus = options.bus;
    this.#metrics = options.metrics;
    this.#maxLineBytes = options.maxLineBytes;
    this.#decodeOptions = { maxLineBytes: options.maxLineBytes };
    this.#callKeys = new RecentKeys(Math.ceil(MAX_REMEMBERED / 2));
    this.#synthetic = new GenerationalMap(MAX_REMEMBERED);
    this.#log = options.log ?? (() => {});
  }

  /**
   * The id that identifies `event` across replays for the tracing subscriber: `''` for ids the
   * sidecar made up, so such calls are paired and given span ids by their tool call id.
   */
  stableEventId = (event: BusEvent): string =>
    this.#syntheticCount !== 0 && this.#synthetic.get(event.id) === true ? '' : event.id;

  /**
   * Whether the line being replayed was read by the run before a restart (its file's
   * checkpoint says how far that run read): its calls are exported again, not measured again.
   */
  get replaying(): boolean {
    return this.#replaying;
  }

  /** The parent an envelope's `traceparent` gave a tool call, for the subscriber. */
  parentContext = (event: BusEvent): Context | undefined => {
    const context = this.#traceparents.get(event.id);
    if (context !== undefined) this.#traceparents.delete(event.id);
    return context;
  };

  /**
   * Pins a span that just started to the line being replayed (see {@link CheckpointTracker}),
   * under a receipt rather than the span itself, which the export lets go once it is encoded.
   */
  spanStarted(span: object): void {
    const dispatch = this.#dispatch;
    if (dispatch === UNTRACKED) return;
    const tracker = dispatch?.tracker ?? this.#fallbackTracker;
    if (tracker === undefined) return;
    const receipt: PinReceipt = { tracker };
    if (dispatch !== undefined) tracker.pin(receipt, dispatch.root);
    else tracker.pinHere(receipt);
    this.#pinned.set(span, receipt);
  }

  /**
   * What export keeps of an ended span to release its pin once exported ({@link spanExported}):
   * `undefined` when nothing is pinned, or when the span was ended by shutdown, which keeps its
   * pin: the call is not over, and a restart must read it again to export it whole. (With the
   * sidecar's derived ids such a call is not ended at all, which keeps its pin just the same;
   * the snapshot exported in its place, `tooltrace.inflight`, lets go of its own.)
   */
  spanEnded(span: { attributes: Record<string, unknown> }): object | undefined {
    const receipt = this.#pinned.get(span);
    if (receipt === undefined) return undefined;
    this.#pinned.delete(span);
    const cut =
      span.attributes[ATTR_END_REASON] === 'shutdown' && span.attributes[ATTR_INFLIGHT] !== true;
    return cut ? undefined : receipt;
  }

  /** Releases the pin of an exported span, by what {@link spanEnded} gave for it. */
  spanExported(receipt: object): void {
    const { tracker } = receipt as PinReceipt;
    tracker.unpin(receipt);
  }

  /** Sets the tracker that spans started outside any line (held events released later) pin. */
  setFallbackTracker(tracker: CheckpointTracker | undefined): void {
    this.#fallbackTracker = tracker;
  }

  /**
   * A line source for `name` (`stdin`, `file`). With a `tracker`, every line reports its root
   * and end to it, and the spans it starts are pinned there; the splitter's offsets start at
   * the tracker's. Each line is told to `onLine` (see {@link LineHooks}).
   */
  source(
    name: string,
    tracker?: CheckpointTracker,
    label: string = name,
    onLine?: LineHooks['onLine'],
  ): LineSource {
    const startOffset = tracker?.lineEnd ?? 0;
    // Lines are numbered from where reading starts; a file resumed mid-way says from where.
    const rejectedLines = new RejectedLines(
      startOffset === 0 ? label : `${label} (read from byte ${startOffset})`,
      this.#log,
    );
    const splitter = this.#lines(name, { tracker, rejectedLines, onLine });
    return {
      push: (chunk) => splitter.push(chunk),
      end: () => {
        splitter.end();
        rejectedLines.ended();
      },
    };
  }

  /**
   * Decodes and replays a whole NDJSON body (one HTTP request), given as the chunks it arrived
   * in (never joined: copying 16 MiB into one buffer alone held the event loop for 100 ms on a
   * loaded machine), and resolves with what became of it. The body is replayed
   * {@link BODY_SLICE_BYTES} at a time with a turn of the event loop between slices: a 16 MiB
   * body takes about a second of CPU, and probes and other clients must not wait for it. The
   * queue budget is charged line by line: once `isFull()` says so after a line, the lines after
   * it are left unread (counted in `unread`), so no single request can overshoot the budget by
   * more than the spans one line ends.
   */
  async ingestBody(
    body: Uint8Array | readonly Uint8Array[],
    sourceName: string,
    client = '',
    isFull?: () => boolean,
  ): Promise<IntakeOutcome> {
    let accepted = 0;
    let unread = 0;
    let full = false;
    const rejected: Record<string, number> = {};
    const splitter = this.#lines(sourceName, {
      client,
      rejectedLines: this.#rejectedOfClient(sourceName, client),
      ofWhat: ' of a request',
      skip: () => {
        if (full) unread += 1;
        return full;
      },
      onLine: (_lineNumber, failure) => {
        if (failure === undefined) accepted += 1;
        else rejected[failure.reason] = (rejected[failure.reason] ?? 0) + 1;
        full = isFull?.() ?? false;
      },
    });
    let first = true;
    for (const chunk of body instanceof Uint8Array ? [body] : body) {
      for (let start = 0; start < chunk.length; start += BODY_SLICE_BYTES) {
        if (!first) await yieldToEventLoop();
        first = false;
        splitter.push(chunk.subarray(start, start + BODY_SLICE_BYTES));
      }
    }
    splitter.end();
    return { accepted, rejected, unread };
  }

  /**
   * The one byte-to-line path of every source (standard input, a followed file, an HTTP body,
   * `tooltrace view`'s journal): split, numbered, a line of white space only skipped, each other
   * line decoded and replayed, or rejected (counted by reason and logged).
   */
  #lines(name: string, hooks: LineHooks): LineSplitter {
    const { tracker, client = '', rejectedLines, ofWhat = '' } = hooks;
    let lineStart = tracker?.lineEnd ?? 0;
    let lineNumber = 0;
    const done = (failure: DecodeFailure | undefined, endOffset: number): void => {
      if (failure !== undefined) {
        this.#metrics.rejected(failure.reason);
        rejectedLines.rejected(`line ${lineNumber}${ofWhat}`, failure.reason, failure.message);
      }
      hooks.onLine?.(lineNumber, failure);
      lineStart = endOffset;
    };
    return new LineSplitter({
      maxLineBytes: this.#maxLineBytes,
      startOffset: lineStart,
      onLine: (line, endOffset) => {
        lineNumber += 1;
        if (hooks.skip?.() === true) return;
        if (isBlank(line)) {
          tracker?.lineDone(lineStart, endOffset);
          lineStart = endOffset;
          return;
        }
        const result = this.#ingest(line, name, tracker, lineStart, endOffset, client);
        done(result === true ? undefined : result, endOffset);
      },
      onOversizedLine: (length, endOffset) => {
        lineNumber += 1;
        if (hooks.skip?.() === true) return;
        tracker?.lineDone(lineStart, endOffset);
        done(lineTooLarge(length, this.#maxLineBytes), endOffset);
      },
    });
  }

  /**
   * Decodes and replays one line: `true`, or the reason it was rejected and what was wrong (not
   * yet counted). A followed file's tracker learns the line's root and end.
   */
  #ingest(
    line: Uint8Array,
    sourceName: string,
    tracker: CheckpointTracker | undefined,
    lineStart: number,
    lineEnd: number,
    client = '',
  ): true | DecodeFailure {
    const result = decodeEnvelope(line, this.#decodeOptions);
    if (!result.ok) {
      tracker?.lineDone(lineStart, lineEnd);
      return result;
    }
    if (result.droppedFields !== undefined) this.#countDropped(result);
    const init = result.event;
    this.#assignSession(init, sourceName, client);
    // Counted before the ids are scoped, so a report names the id the client sent.
    this.#countReuse(init, result.hasEventId, client === '' ? sourceName : client);
    if (client !== '') scopeEventIds(init, client, result.hasEventId);
    // A made-up id is remembered so the tracer pairs the call by its tool call id instead; the
    // tracer never reads a stream event's id, so those are left to the bus to make up.
    if (
      !result.hasEventId &&
      init.type !== TOOL_STREAM_PROGRESS &&
      init.type !== TOOL_STREAM_PARTIAL
    ) {
      init.id = newEventId();
      this.#rememberSynthetic(init.id);
    }
    if (result.traceparent !== undefined && init.type === TOOL_INVOKE) {
      const context = contextFromTraceparent(result.traceparent);
      if (context !== undefined) {
        this.#traceparents.set(init.id!, context);
        if (this.#traceparents.size > MAX_REMEMBERED) {
          this.#traceparents.delete(this.#traceparents.keys().next().value!);
        }
      }
    }
    const root = tracker?.rootOf(lineStart, init, result.hasEventId ? init.id! : '') ?? 0;
    this.#dispatch = tracker === undefined ? UNTRACKED : { tracker, root };
    this.#replaying = tracker?.readBefore(lineEnd) ?? false;
    try {
      return this.#emit(init, sourceName);
    } finally {
      this.#dispatch = undefined;
      this.#replaying = false;
      tracker?.lineDone(root, lineEnd);
    }
  }

  /** The rejected-line log of an HTTP client (one per client, named by it), made on first use. */
  #rejectedOfClient(sourceName: string, client: string): RejectedLines {
    const key = `${sourceName}\u0000${client}`;
    let found = this.#rejectedByClient.get(key);
    if (found === undefined) {
      found = new RejectedLines(
        client === '' ? sourceName : `${sourceName} client ${client}`,
        this.#log,
      );
      this.#rejectedByClient.set(key, found);
    }
    return found;
  }

  /**
   * Counts the fields a line lost to their type, by event type and field, and says each
   * (type, field) once on the log, with what was wrong: the line itself went through.
   */
  #countDropped(result: DecodeSuccess): void {
    const type = result.event.type;
    for (const { field, message } of result.droppedFields!) {
      if (!this.#metrics.fieldDropped(type, field)) continue;
      this.#log(
        `tooltrace sidecar: a ${type} line has ${message}; the field is left out and the event kept (counted in tooltrace_fields_dropped_total, reported once per field)`,
      );
    }
  }

  /**
   * Fills a line's empty session from the last `io.session.start` of its source — of its client,
   * for HTTP — and scopes the session of a client's line to that client (see
   * {@link scopedSession}).
   */
  #assignSession(init: EventInit, sourceName: string, client: string): void {
    const causation = init.causation!;
    const sourceKey = client === '' ? sourceName : `${sourceName}\u0000${client}`;
    // The decoder gave an io.session.start its typed payload: `sessionId`, whatever the line spelled.
    const payload = init.payload as SessionStart | null | undefined;
    if (init.type === IO_SESSION_START) {
      const named = payload?.sessionId;
      const sessionId = typeof named === 'string' && named !== '' ? named : causation.sessionId;
      if (sessionId !== undefined && sessionId !== '') {
        this.#sessions.set(sourceKey, sessionId);
        causation.sessionId = sessionId;
      }
    } else if (causation.sessionId === '' || causation.sessionId === undefined) {
      const sessionId = this.#sessions.get(sourceKey);
      if (sessionId !== undefined) causation.sessionId = sessionId;
    }
    if (client === '') return;
    causation.sessionId = scopedSession(client, causation.sessionId ?? '');
    if (init.type === IO_SESSION_START && payload !== null && typeof payload === 'object') {
      // The tracer reads the session an io.session.start announces from its payload.
      if (typeof payload.sessionId === 'string') payload.sessionId = causation.sessionId;
    }
  }

  /**
   * Counts an event id seen before, and a tool call id invoked again in the same session: the
   * tracer drops the first as a duplicate and ends the earlier call's span early for the second,
   * so both are counted (`tooltrace_ids_reused_total`) and reported once per client.
   *
   * The ids of `tool.stream.*` events are not looked at: nothing in the trace depends on them
   * (the tracer finds a stream event's call by its parent or call id and tells duplicates by
   * sequence number, and no span has a stream event as its cause), while checking them was 6%
   * of the sidecar's time on a journal that is five-sixths stream events. A client replaying its
   * lines still shows, through its invokes and results.
   */
  #countReuse(init: EventInit, hasEventId: boolean, client: string): void {
    const type = init.type;
    if (hasEventId && type !== TOOL_STREAM_PROGRESS && type !== TOOL_STREAM_PARTIAL) {
      let eventIds = this.#eventIds.get(client);
      if (eventIds === undefined) {
        eventIds = new RecentKeys(Math.ceil(MAX_REMEMBERED / 2));
        this.#eventIds.set(client, eventIds);
      }
      if (eventIds.seenBefore(init.id!)) this.#reused('event_id', client, init);
    }
    if (init.type !== TOOL_INVOKE) return;
    const payload = init.payload as { id?: unknown } | null | undefined;
    const callId = payload?.id;
    if (typeof callId !== 'string' || callId === '') return;
    const key = callKey(init.causation?.sessionId ?? '', callId);
    if (this.#callKeys.seenBefore(key)) this.#reused('call_id', client, init);
  }

  #reused(kind: 'event_id' | 'call_id', client: string, init: EventInit): void {
    this.#metrics.reused(kind, client);
    const reported = `${kind}\u0000${client}`;
    if (this.#reuseReported.has(reported)) return;
    this.#reuseReported.add(reported);
    const payload = init.payload as { id?: unknown; name?: unknown } | null | undefined;
    const session = init.causation?.sessionId ?? '';
    const what =
      kind === 'event_id'
        ? `event id ${init.id ?? ''} (${init.type})`
        : `tool call id ${String(payload?.id)} of tool ${String(payload?.name)} in session ${
            unscopedSession(session)?.session ?? session
          }`;
    this.#log(
      `tooltrace sidecar: ${client} reused ${what}; counted in tooltrace_ids_reused_total (reported once)`,
    );
  }

  #emit(init: EventInit, sourceName: string): true | DecodeFailure {
    try {
      this.#bus.emitEvent(init);
      this.#metrics.received(sourceName);
      return true;
    } catch {
      // The decoder checked every field the bus checks; this is a safety net, not a path.
      return { ok: false, reason: 'wrong_type', message: 'the bus refused it' };
    }
  }

  #rememberSynthetic(id: string): void {
    this.#syntheticCount += 1;
    this.#synthetic.set(id, true);
  }
}

/** The remote parent a valid `traceparent` names (the decoder already validated it). */
function contextFromTraceparent(text: string): Context | undefined {
  const parts = parseTraceparent(text);
  if (parts === undefined) return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parts.traceId,
    spanId: parts.spanId,
    traceFlags: parts.flags & TraceFlags.SAMPLED,
    isRemote: true,
  });
}

/** Scopes a client's event id and parent id to it (see {@link scopedEventId}). */
function scopeEventIds(init: EventInit, client: string, hasEventId: boolean): void {
  if (hasEventId) init.id = scopedEventId(client, init.id!);
  const causation = init.causation!;
  if (causation.parentId !== undefined && causation.parentId !== '') {
    causation.parentId = scopedEventId(client, causation.parentId);
  }
}

/** Whether a line holds nothing but ASCII white space (as a journal's trailing lines may). */
function isBlank(line: Uint8Array): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}
