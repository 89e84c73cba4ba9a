import type { Attributes, HrTime, Span } from '@opentelemetry/api';
import { TOOL_STREAM_PARTIAL, TOOL_STREAM_PROGRESS } from '../../events/index.js';
import {
  ATTR_STREAM_EVENTS_COALESCED,
  ATTR_STREAM_EVENTS_RECORDED,
  ATTR_STREAM_LAST_PROGRESS,
  ATTR_STREAM_PARTIAL_BYTES,
  ATTR_STREAM_PARTIAL_COUNT,
  ATTR_STREAM_PROGRESS_COUNT,
  ATTR_STREAM_TIME_TO_FIRST_PARTIAL_MS,
  toolSpanName,
} from '../attribute-names.js';
import { OpenSpan } from '../open-span.js';
import { sdkEventList, type SdkTimedEvent } from '../sdk-event-list.js';
import { AttributeCollector, type AttributeTarget } from '../attribute-target.js';
import type { ContentCapture } from '../content-capture.js';
import { byTime, millisecondsBetween } from '../hr-time.js';
import { McpOperation } from './mcp-operation.js';
import { payloadBytes } from '../../bus/payload-bytes.js';
import { streamEventAttributes } from './stream-event-attributes.js';
import { PARTIAL, StreamSampler, type StreamKind, type StreamMark } from './stream-sampler.js';

/** The most missing sequence numbers a call remembers for deduplication. */
const MAX_GAPS = 1024;

/** Settings every open call shares, resolved once by the subscriber. */
export interface StreamSettings {
  /** How many of the first stream events are kept (the head). */
  readonly headSize: number;
  /** Capacity of the sampled middle (0 with `maxStreamEvents` below 2). */
  readonly middleSize: number;
  /** Whether a last-event slot exists (`maxStreamEvents` >= 1). */
  readonly keepLast: boolean;
  /** Content capture, or `undefined` when content is off. */
  readonly capture: ContentCapture | undefined;
}

/**
 * The {@link StreamSettings} for `maxStreamEvents`: a quarter of them for the head, one for
 * the last event, the rest for the sampled middle.
 */
export function streamSettings(
  maxStreamEvents: number,
  capture: ContentCapture | undefined,
): StreamSettings {
  const headSize = Math.floor(maxStreamEvents / 4);
  return {
    headSize,
    middleSize: Math.max(0, maxStreamEvents - headSize - 1),
    keepLast: maxStreamEvents - headSize >= 1,
    capture,
  };
}

/** How an {@link OpenCall} is identified and placed, fixed when its span starts. */
export interface OpenCallInit {
  /** Id of the `tool.invoke` event, `''` when unknown (a journal without ids, or an orphan). */
  readonly invokeId: string;
  /** The tool call id (`tc_1`), `''` when the events carry none. */
  readonly callId: string;
  readonly sessionId: string;
  /** Causal parent of the `tool.invoke`: where walks from this call's result continue. */
  readonly parentLink: string;
  /** Span id of the span's parent (`''` for a root): the agent span it keeps busy. */
  readonly parentSpanId: string;
  /** The tool's name (`''` when unknown). */
  readonly toolName: string;
  /** Agent id of the event that started the span, for in-flight snapshots. */
  readonly agentId: string;
  /** `gen_ai.agent.name` of the span, for in-flight snapshots. */
  readonly agentName: string;
  readonly startUnixNano: bigint;
  /** `startUnixNano` as the span was started with it (the SDK keeps this array; read only). */
  readonly startHrTime: HrTime;
  /** Whether the span was started by stream events or a result, not by its `tool.invoke`. */
  readonly orphan: boolean;
  /** Bus sequence of the `tool.invoke` (what its events carry as `parentSeq`), 0 when unknown. */
  readonly invokeSequence: number;
}

/**
 * One tool call whose span is open: the span, the stream summary, the sampler for span events,
 * and what deduplication needs. Stream events are deduplicated by sequence number (the contract
 * makes it monotonic per call from 1): a sequence above the highest seen is new; one below is
 * new only if it was skipped before (a bounded set of gaps), otherwise it is a duplicate. That
 * costs one comparison per in-order event instead of an id lookup. Its state changes only
 * through its methods: it ends once, and learns a late invoke once.
 */
export class OpenCall extends OpenSpan {
  readonly callId: string;
  readonly sessionId: string;
  readonly orphan: boolean;
  readonly invokeSequence: number;
  readonly agentId: string;
  readonly agentName: string;
  /** The tool name the call was counted in flight under (a late invoke may rename it). */
  readonly meteredName: string;
  /** Subscriber clock (ms) when the span started: when the call is due its first snapshot. */
  readonly openedAt: number;
  #invokeId: string;
  #parentLink: string;
  #toolName: string;
  #invokeLate = false;
  #liveUpdates = 0;
  #liveAt: number;
  /**
   * {@link OpenCall.streamEventCount} at the latest snapshot (attempted), `-1` before the first:
   * a different count means the call changed since, and a call always "changed" at first.
   */
  #liveStreamEvents = -1;

  #partialCount = 0;
  #progressCount = 0;
  #partialBytes = 0;
  #firstPartialUnixNano: bigint | undefined;
  #lastProgress = -1;
  #recorded = 0;
  #highestSequence = 0;
  #gaps: Set<number> | undefined;
  #sampler: StreamSampler | undefined;
  /**
   * Whether a stream event came with a time before the call's latest: only then can the kept
   * marks be out of time order, so only then does the flush compare their times.
   */
  #streamBackwards = false;
  /** The latest partial's payload, kept only with content capture, for in-flight snapshots. */
  #lastPartialPayload: unknown;
  /** The MCP operation the call is, when an MCP adapter marked it. */
  #mcp: McpOperation | undefined;
  readonly #settings: StreamSettings;

  constructor(span: Span, init: OpenCallInit, now: number, settings: StreamSettings) {
    super(span, init.parentSpanId, init.startUnixNano, init.startHrTime, now);
    this.callId = init.callId;
    this.sessionId = init.sessionId;
    this.orphan = init.orphan;
    this.invokeSequence = init.invokeSequence;
    this.agentId = init.agentId;
    this.agentName = init.agentName;
    this.meteredName = init.toolName;
    this.openedAt = now;
    this.#invokeId = init.invokeId;
    this.#parentLink = init.parentLink;
    this.#toolName = init.toolName;
    this.#liveAt = now;
    this.#settings = settings;
  }

  /** Id of the `tool.invoke` event, `''` when unknown (a journal without ids, or an orphan). */
  get invokeId(): string {
    return this.#invokeId;
  }

  /** The event that started the span, for causal walks: its invoke. */
  get startEventId(): string {
    return this.#invokeId;
  }

  /** Causal parent of the `tool.invoke`: where walks from this call's result continue. */
  get parentLink(): string {
    return this.#parentLink;
  }

  /** The tool's name (`''` when unknown); a late invoke may set it. */
  get toolName(): string {
    return this.#toolName;
  }

  /** Whether an orphan span learned its `tool.invoke` after it started. */
  get invokeLate(): boolean {
    return this.#invokeLate;
  }

  /** In-flight snapshots exported so far. */
  get liveUpdates(): number {
    return this.#liveUpdates;
  }

  /**
   * Takes in the `tool.invoke` of a call whose span its stream events or result started: its
   * name (when it has one), its id (when the span had none; `true` then, so the caller indexes
   * it) and its causal parent. Only the first late invoke counts; the caller checks
   * {@link OpenCall.invokeLate}.
   */
  attachLateInvoke(invokeId: string, parentLink: string, toolName: string): boolean {
    this.#invokeLate = true;
    if (toolName !== '') {
      this.#toolName = toolName;
      this.span.updateName(toolSpanName(toolName));
    }
    this.#parentLink = parentLink;
    if (invokeId === '' || this.#invokeId !== '') return false;
    this.#invokeId = invokeId;
    return true;
  }

  /** The MCP operation the call is (a `tools/call` sent or served), when it is one. */
  get mcp(): McpOperation | undefined {
    return this.#mcp;
  }

  /** Takes in the span attributes of the call's invoke (`server`) or result (`client`). */
  noteMcp(attributes: unknown, side: 'client' | 'server'): void {
    this.#mcp = McpOperation.note(this.#mcp, attributes, side);
  }

  /**
   * Whether an in-flight snapshot is due at `now`: `intervalMs` after the start or the latest
   * snapshot, if the call changed since (a call has always changed before its first).
   */
  snapshotDue(now: number, intervalMs: number): boolean {
    return now - this.#liveAt >= intervalMs && this.streamEventCount !== this.#liveStreamEvents;
  }

  /** Notes a snapshot attempt at `now`, before anything can throw: a failing call is not retried every tick. */
  snapshotAttempted(now: number): void {
    this.#liveAt = now;
    this.#liveStreamEvents = this.streamEventCount;
  }

  /** Notes that snapshot number {@link OpenCall.liveUpdates} + 1 was exported. */
  snapshotExported(): void {
    this.#liveUpdates += 1;
  }

  /**
   * Records one stream event (`attributes`: its own, from its payload). Returns `false` for a duplicate (a sequence number already seen),
   * which changes nothing.
   */
  recordStream(
    kind: StreamKind,
    timeUnixNano: bigint,
    sequence: unknown,
    progress: unknown,
    payload: unknown,
    attributes: unknown,
    now: number,
  ): boolean {
    const seq = typeof sequence === 'number' && Number.isSafeInteger(sequence) ? sequence : 0;
    if (seq > 0 && !this.#isNew(seq)) return false;
    if (timeUnixNano < this.lastUnixNano) this.#streamBackwards = true;
    this.touch(timeUnixNano, now);
    let value: number;
    if (kind === PARTIAL) {
      value = payloadBytes(payload);
      this.#partialCount += 1;
      this.#partialBytes += value;
      if (this.#firstPartialUnixNano === undefined || timeUnixNano < this.#firstPartialUnixNano) {
        this.#firstPartialUnixNano = timeUnixNano;
      }
    } else {
      value = typeof progress === 'number' ? progress : -1;
      this.#progressCount += 1;
      if (value >= 0) this.#lastProgress = value;
    }
    const settings = this.#settings;
    const capture = settings.capture;
    // With content capture a payload is kept until the span ends: no more of it than is recorded.
    if (capture !== undefined && payload !== undefined) {
      payload = capture.held(payload, kind === PARTIAL ? value : payloadBytes(payload));
      if (kind === PARTIAL) this.#lastPartialPayload = payload;
    }
    this.#sampler ??= new StreamSampler(settings.headSize, settings.middleSize, settings.keepLast);
    this.#sampler.offer(
      kind,
      timeUnixNano,
      seq,
      value,
      capture === undefined ? undefined : payload,
      attributes,
    );
    return true;
  }

  /** Adds the kept stream events to the span, in arrival order; call once, before ending. */
  flushStream(): void {
    const sampler = this.#sampler;
    if (sampler === undefined) return;
    this.#sampler = undefined;
    const marks = sampler.marks();
    // Events that arrived out of order (a sidecar's input) still become span events in time order.
    // Marks are kept in arrival order, so events that never went back in time are in order.
    for (let index = 1; this.#streamBackwards && index < marks.length; index += 1) {
      if (marks[index - 1]!.timeUnixNano > marks[index]!.timeUnixNano) {
        marks.sort(byTime);
        break;
      }
    }
    // Without content capture a mark's own event is a name, two numbers and a time: straight
    // into the SDK span's event list when that stores what `addEvent` would (`sdkEventList`).
    const direct =
      this.#settings.capture === undefined ? sdkEventList(this.span, marks.length, 2) : undefined;
    for (const mark of marks) {
      this.#recorded += 1;
      this.#addEvent(mark, mark.attributes === undefined ? direct : undefined);
    }
  }

  /** Writes the stream summary every span carries (after {@link OpenCall.flushStream}). */
  writeSummary(target: AttributeTarget): void {
    this.#writeProgress(target);
    target.setAttribute(ATTR_STREAM_EVENTS_RECORDED, this.#recorded);
    target.setAttribute(ATTR_STREAM_EVENTS_COALESCED, this.streamEventCount - this.#recorded);
    this.summarizeBusEvents(target);
  }

  /**
   * The stream summary so far, without what only the end decides (which events became span
   * events): counts, bytes, time to first partial, last progress. In-flight snapshots carry it.
   */
  progressAttributes(): Attributes {
    const collector = new AttributeCollector();
    this.#writeProgress(collector);
    return collector.attributes;
  }

  #writeProgress(target: AttributeTarget): void {
    target.setAttribute(ATTR_STREAM_PARTIAL_COUNT, this.#partialCount);
    target.setAttribute(ATTR_STREAM_PROGRESS_COUNT, this.#progressCount);
    target.setAttribute(ATTR_STREAM_PARTIAL_BYTES, this.#partialBytes);
    if (this.#firstPartialUnixNano !== undefined) {
      target.setAttribute(
        ATTR_STREAM_TIME_TO_FIRST_PARTIAL_MS,
        Math.max(0, millisecondsBetween(this.startUnixNano, this.#firstPartialUnixNano)),
      );
    }
    if (this.#lastProgress >= 0) target.setAttribute(ATTR_STREAM_LAST_PROGRESS, this.#lastProgress);
  }

  /** Stream events recorded so far (duplicates excluded): what tells a snapshot it is stale. */
  get streamEventCount(): number {
    return this.#partialCount + this.#progressCount;
  }

  /** Time of the first partial, `undefined` before one came. */
  get firstPartialUnixNano(): bigint | undefined {
    return this.#firstPartialUnixNano;
  }

  /** The latest partial's payload; `undefined` without content capture. */
  get lastPartialPayload(): unknown {
    return this.#lastPartialPayload;
  }

  /** Stream events that were only counted, not kept as span events. */
  get coalescedCount(): number {
    return this.streamEventCount - this.#recorded - (this.#sampler?.size ?? 0);
  }

  /** Adds one kept mark as a span event: into `direct` when given, else through `addEvent`. */
  #addEvent(mark: StreamMark, direct: SdkTimedEvent[] | undefined): void {
    const { kind, sequence, value, payload } = mark;
    const attributes = streamEventAttributes(
      kind,
      sequence,
      value,
      payload,
      this.#settings.capture,
      mark.attributes,
    );
    const name = kind === PARTIAL ? TOOL_STREAM_PARTIAL : TOOL_STREAM_PROGRESS;
    const time = this.hrTime(mark.timeUnixNano);
    if (direct !== undefined) direct.push({ name, attributes, time, droppedAttributesCount: 0 });
    else this.span.addEvent(name, attributes, time);
  }

  #isNew(sequence: number): boolean {
    const highest = this.#highestSequence;
    if (sequence > highest) {
      if (sequence > highest + 1) this.#rememberGaps(highest + 1, sequence - 1);
      this.#highestSequence = sequence;
      return true;
    }
    return this.#gaps?.delete(sequence) === true;
  }

  #rememberGaps(from: number, to: number): void {
    const gaps = (this.#gaps ??= new Set());
    // Only the gaps nearest the new high mark: an event older than that is taken as a duplicate.
    for (let sequence = Math.max(from, to - MAX_GAPS + 1); sequence <= to; sequence += 1) {
      if (gaps.size >= MAX_GAPS) break;
      gaps.add(sequence);
    }
  }
}
