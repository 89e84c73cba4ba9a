import { ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { newEventId, type BusEvent, type EventBus } from '../bus/index.js';
import { TOOL_INVOKE } from '../events/index.js';
import { decodeEnvelope, LineSplitter } from '../wire/index.js';
import type { IntakeOutcome } from './http-intake.js';
import type { OffsetPins } from './offset-pins.js';
import type { SidecarMetrics } from './sidecar-metrics.js';

/** Options for {@link EventPipeline}. */
export interface EventPipelineOptions {
  bus: EventBus;
  metrics: SidecarMetrics;
  maxLineBytes: number;
  /**
   * How many recent events are remembered for checkpoint bookkeeping and synthetic ids.
   * @default 100000
   */
  maxRemembered?: number;
}

/** What one source feeds: a splitter bound to it, and where its checkpoint pins go. */
export interface LineSource {
  /** Feeds the next raw bytes of the stream. */
  push(chunk: Uint8Array): void;
  /** Delivers a final line without newline. */
  end(): void;
  /** Stream position just past the last complete line handled. */
  readonly lineEnd: number;
}

/** Per-event bookkeeping for the checkpoint: the offset of the line that began its causal chain. */
interface Remembered {
  rootOffset: number;
}

/**
 * Turns NDJSON lines into events on the sidecar's own bus: decode (every rejection counted by
 * reason), replay with `emitEvent`, and — for a followed file — record which byte offset each
 * tool call depends on, so the checkpoint never passes a call whose span was not exported.
 * A call depends on the line that began its causal chain (its root event), because after a
 * restart the subscriber needs that line again to give the call the same trace.
 */
export class EventPipeline {
  readonly #bus: EventBus;
  readonly #metrics: SidecarMetrics;
  readonly #maxLineBytes: number;
  readonly #maxRemembered: number;
  /** Events recently replayed from a file, for the causal walk of the checkpoint. */
  #remembered = new Map<string, Remembered>();
  #previousRemembered = new Map<string, Remembered>();
  /** Ids the sidecar made up for lines without `event_id`: they identify nothing across replays. */
  #synthetic = new Set<string>();
  #previousSynthetic = new Set<string>();
  /** Parents from envelope `traceparent`s, by invoke event id, taken once. */
  readonly #traceparents = new Map<string, Context>();

  constructor(options: EventPipelineOptions) {
    this.#bus = options.bus;
    this.#metrics = options.metrics;
    this.#maxLineBytes = options.maxLineBytes;
    this.#maxRemembered = options.maxRemembered ?? 100_000;
  }

  /**
   * The id that identifies `event` across replays for the tracing subscriber: `''` for ids the
   * sidecar made up, so such calls are paired and given span ids by their tool call id.
   */
  stableEventId = (event: BusEvent): string =>
    this.#synthetic.has(event.id) || this.#previousSynthetic.has(event.id) ? '' : event.id;

  /** The parent an envelope's `traceparent` gave a tool call, for the subscriber. */
  parentContext = (event: BusEvent): Context | undefined => {
    const context = this.#traceparents.get(event.id);
    if (context !== undefined) this.#traceparents.delete(event.id);
    return context;
  };

  /**
   * A line source for `name` (`stdin`, `http`, `file`). With `pins`, every tool call read from
   * it pins the offset its causal chain started at until its span is exported.
   */
  source(name: string, options: { startOffset?: number; pins?: OffsetPins } = {}): LineSource {
    const pins = options.pins;
    let lineStart = options.startOffset ?? 0;
    const splitter = new LineSplitter({
      maxLineBytes: this.#maxLineBytes,
      startOffset: options.startOffset ?? 0,
      onLine: (line, endOffset) => {
        this.ingest(line, name, pins === undefined ? undefined : { pins, offset: lineStart });
        lineStart = endOffset;
      },
      onOversizedLine: (_length, endOffset) => {
        this.#metrics.rejected('too_large');
        lineStart = endOffset;
      },
    });
    return {
      push: (chunk) => splitter.push(chunk),
      end: () => splitter.end(),
      get lineEnd() {
        return lineStart;
      },
    };
  }

  /** Decodes and replays a whole NDJSON body (one HTTP request); returns what became of it. */
  ingestBody(body: Uint8Array, sourceName: string): IntakeOutcome {
    let accepted = 0;
    const rejected: Record<string, number> = {};
    const count = (reason: string): void => {
      rejected[reason] = (rejected[reason] ?? 0) + 1;
      this.#metrics.rejected(reason);
    };
    const splitter = new LineSplitter({
      maxLineBytes: this.#maxLineBytes,
      onLine: (line) => {
        const result = this.#ingest(line, sourceName, undefined);
        if (result === true) accepted += 1;
        else count(result);
      },
      onOversizedLine: () => count('too_large'),
    });
    splitter.push(body);
    splitter.end();
    return { accepted, rejected };
  }

  /** Decodes and replays one line; returns whether it was accepted. */
  ingest(
    line: Uint8Array | string,
    sourceName: string,
    position?: { pins: OffsetPins; offset: number },
  ): boolean {
    const result = this.#ingest(line, sourceName, position);
    if (result === true) return true;
    this.#metrics.rejected(result);
    return false;
  }

  /** Decodes and replays one line: `true`, or the reason it was rejected (not yet counted). */
  #ingest(
    line: Uint8Array | string,
    sourceName: string,
    position: { pins: OffsetPins; offset: number } | undefined,
  ): true | string {
    const result = decodeEnvelope(line, { maxLineBytes: this.#maxLineBytes });
    if (!result.ok) return result.reason;
    this.#metrics.received(sourceName);
    const init = result.event;
    if (!result.hasEventId) {
      init.id = newEventId();
      this.#remember(this.#synthetic, init.id);
    }
    if (result.traceparent !== undefined && init.type === TOOL_INVOKE) {
      const context = contextFromTraceparent(result.traceparent);
      if (context !== undefined) {
        init.id ??= newEventId();
        this.#traceparents.set(init.id, context);
        if (this.#traceparents.size > this.#maxRemembered) {
          this.#traceparents.delete(this.#traceparents.keys().next().value!);
        }
      }
    }
    let event: BusEvent;
    try {
      event = this.#bus.emitEvent(init);
    } catch {
      // The decoder checked every field the bus checks; this is a safety net, not a path.
      return 'wrong_type';
    }
    if (position !== undefined) this.#track(event, position.pins, position.offset);
    return true;
  }

  #track(event: BusEvent, pins: OffsetPins, offset: number): void {
    const parentId = event.causation.parentId;
    const parent =
      parentId === ''
        ? undefined
        : (this.#remembered.get(parentId) ?? this.#previousRemembered.get(parentId));
    const rootOffset = parent?.rootOffset ?? offset;
    this.#remembered.set(event.id, { rootOffset });
    if (this.#remembered.size >= this.#maxRemembered) {
      this.#previousRemembered = this.#remembered;
      this.#remembered = new Map();
    }
    if (event.type === TOOL_INVOKE) pins.pin(event.id, rootOffset);
  }

  #remember(set: Set<string>, id: string): void {
    set.add(id);
    if (set.size >= this.#maxRemembered) {
      this.#previousSynthetic = this.#synthetic;
      this.#synthetic = new Set();
    }
  }
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function contextFromTraceparent(text: string): Context | undefined {
  const match = TRACEPARENT.exec(text);
  if (match === null) return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  });
}
