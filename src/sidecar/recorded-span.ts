import {
  diag,
  SpanStatusCode,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  type Span as ApiSpan,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  type TimeInput,
} from '@opentelemetry/api';
import {
  addHrTimes,
  hrTimeDuration,
  isAttributeValue,
  isTimeInput,
  isTimeInputHrTime,
  millisToHrTime,
  timeInputToHrTime,
  type InstrumentationScope,
} from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';

/**
 * The SDK's default span limits (without `OTEL_SPAN_*_LIMIT` variables): attributes per span,
 * events, links, and attributes per event or link. Values are never truncated.
 */
const LIMIT = 128;

/** What a {@link RecordedSpan} starts with; the tracer has already drawn its ids. */
export interface RecordedSpanStart {
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  readonly processor: SpanProcessor;
  /** The context the span was started in, handed to the processor's `onStart`. */
  readonly context: Context;
  readonly spanContext: SpanContext;
  readonly parentSpanContext: SpanContext | undefined;
  readonly name: string;
  readonly kind: SpanKind;
  readonly startTime: TimeInput | undefined;
  readonly attributes: Attributes | undefined;
  readonly links: readonly Link[] | undefined;
}

/**
 * A sampled span as the sidecar records it: the API's `Span` for `traceToolCalls` and the SDK's
 * `ReadableSpan` for the span processor and encoder, with the SDK's observable behaviour (default
 * limits with counted drops, invalid attributes dropped with a warning, an `OK` status final,
 * HrTime inputs kept as given, calls after `end()` ignored) and without its per-span costs:
 * attributes are checked and copied once rather than three times, and no clock is read when
 * the caller gives every time, as the sidecar does.
 */
export class RecordedSpan implements ApiSpan, ReadableSpan {
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  readonly attributes: Attributes = {};
  readonly events: TimedEvent[] = [];
  readonly links: Link[] = [];
  readonly #spanContext: SpanContext;
  readonly #processor: SpanProcessor;
  /** `performance.now()` at the start when no start time was given, else `undefined`. */
  readonly #clockStart: number | undefined;
  #name: string;
  #status: SpanStatus = { code: SpanStatusCode.UNSET };
  #endTime: HrTime = [0, 0];
  #duration: HrTime = [-1, -1];
  #ended = false;
  #warnedAfterEnd = false;
  #attributeCount = 0;
  #droppedAttributes = 0;
  #droppedEvents = 0;
  #droppedLinks = 0;

  constructor(start: RecordedSpanStart) {
    this.#spanContext = start.spanContext;
    this.#processor = start.processor;
    this.#name = start.name;
    this.kind = start.kind;
    this.parentSpanContext = start.parentSpanContext;
    this.resource = start.resource;
    this.instrumentationScope = start.instrumentationScope;
    if (start.links !== undefined) for (const link of start.links) this.addLink(link);
    if (start.startTime === undefined) {
      this.#clockStart = performance.now();
      this.startTime = millisToHrTime(Date.now());
    } else {
      this.startTime = toHrTime(start.startTime);
    }
    if (start.attributes !== undefined) this.setAttributes(start.attributes);
    this.#processor.onStart(this, start.context);
  }

  get name(): string {
    return this.#name;
  }

  get status(): SpanStatus {
    return this.#status;
  }

  get endTime(): HrTime {
    return this.#endTime;
  }

  get duration(): HrTime {
    return this.#duration;
  }

  get ended(): boolean {
    return this.#ended;
  }

  get droppedAttributesCount(): number {
    return this.#droppedAttributes;
  }

  get droppedEventsCount(): number {
    return this.#droppedEvents;
  }

  get droppedLinksCount(): number {
    return this.#droppedLinks;
  }

  spanContext(): SpanContext {
    return this.#spanContext;
  }

  isRecording(): boolean {
    return !this.#ended;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (value === undefined || value === null || this.#isEnded()) return this;
    if (key.length === 0) {
      diag.warn(`Invalid attribute key: ${key}`);
      return this;
    }
    if (!isAttributeValue(value)) {
      diag.warn(`Invalid attribute value set for key: ${key}`);
      return this;
    }
    const isNew = !Object.hasOwn(this.attributes, key);
    if (isNew && this.#attributeCount >= LIMIT) {
      this.#droppedAttributes += 1;
      return this;
    }
    this.attributes[key] = Array.isArray(value) ? value.slice() : value;
    if (isNew) this.#attributeCount += 1;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) {
      if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]!);
    }
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.#isEnded()) return this;
    if (this.events.length >= LIMIT) {
      if (this.#droppedEvents === 0) diag.debug('Dropping extra events.');
      this.events.shift();
      this.#droppedEvents += 1;
    }
    let attributes = attributesOrTime as Attributes | undefined;
    if (isTimeInput(attributesOrTime)) {
      if (!isTimeInput(time)) time = attributesOrTime;
      attributes = undefined;
    }
    const copy = limitedCopy(attributes);
    this.events.push({
      name,
      attributes: copy.attributes,
      time: this.#time(time),
      droppedAttributesCount: copy.dropped,
    });
    return this;
  }

  addLink(link: Link): this {
    if (this.#isEnded()) return this;
    if (this.links.length >= LIMIT) {
      if (this.#droppedLinks === 0) diag.debug('Dropping extra links.');
      this.links.shift();
      this.#droppedLinks += 1;
    }
    const copy = limitedCopy(link.attributes);
    const kept: Link = { context: link.context };
    // As the SDK: both fields only when they say something.
    if (copy.kept > 0) kept.attributes = copy.attributes;
    if (copy.dropped > 0) kept.droppedAttributesCount = copy.dropped;
    this.links.push(kept);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  /** `UNSET` changes nothing, `OK` is final, and only an `ERROR` keeps a (string) message. */
  setStatus(status: SpanStatus): this {
    if (this.#isEnded() || status.code === SpanStatusCode.UNSET) return this;
    if (this.#status.code === SpanStatusCode.OK) return this;
    const next: SpanStatus = { code: status.code };
    if (status.code === SpanStatusCode.ERROR) {
      if (typeof status.message === 'string') next.message = status.message;
      else if (status.message != null) {
        diag.warn(
          `Dropping invalid status.message of type '${typeof status.message}', expected 'string'`,
        );
      }
    }
    this.#status = next;
    return this;
  }

  updateName(name: string): this {
    if (!this.#isEnded()) this.#name = name;
    return this;
  }

  /** Ends the span (an end before the start is moved to the start) and hands it on. */
  end(endTime?: TimeInput): void {
    if (this.#isEnded()) return;
    this.#endTime = this.#time(endTime);
    this.#duration = hrTimeDuration(this.startTime, this.#endTime);
    if (this.#duration[0] < 0) {
      diag.warn(
        'Inconsistent start and end time, startTime > endTime. Setting span duration to 0ms.',
        this.startTime,
        this.#endTime,
      );
      this.#endTime = this.startTime.slice() as HrTime;
      this.#duration = [0, 0];
    }
    if (this.#droppedEvents > 0) {
      diag.warn(`Dropped ${this.#droppedEvents} events because eventCountLimit reached`);
    }
    if (this.#droppedLinks > 0) {
      diag.warn(`Dropped ${this.#droppedLinks} links because linkCountLimit reached`);
    }
    this.#processor.onEnding?.(this);
    this.#ended = true;
    this.#processor.onEnd(this);
  }

  /** An `exception` event with the semantic-convention attributes, as the SDK records it. */
  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') {
      attributes['exception.message'] = exception;
    } else if (exception) {
      if (exception.code) attributes['exception.type'] = exception.code.toString();
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message']) {
      this.addEvent('exception', attributes, time);
    } else {
      diag.warn('Failed to record an exception', exception);
    }
  }

  /** True once ended; the first call that comes too late is reported, the rest ignored quietly. */
  #isEnded(): boolean {
    if (this.#ended && !this.#warnedAfterEnd) {
      this.#warnedAfterEnd = true;
      const { traceId, spanId } = this.#spanContext;
      diag.warn(
        `Cannot execute the operation on ended Span {traceId: ${traceId}, spanId: ${spanId}}`,
      );
    }
    return this.#ended;
  }

  /** A time given, else now: measured from the start when that was not given either. */
  #time(input: TimeInput | undefined): HrTime {
    if (input !== undefined) return toHrTime(input);
    if (this.#clockStart === undefined) return millisToHrTime(Date.now());
    return addHrTimes(this.startTime, millisToHrTime(performance.now() - this.#clockStart));
  }
}

/** An HrTime as given (the same array), anything else converted as the SDK does. */
function toHrTime(input: TimeInput): HrTime {
  return isTimeInputHrTime(input) ? input : timeInputToHrTime(input);
}

/**
 * Event or link attributes: valid ones copied (up to the limit, the rest counted), as the SDK
 * does, which keeps `null` and `undefined` values (the encoder skips them) and counts them.
 */
function limitedCopy(attributes: Attributes | undefined): {
  attributes: Attributes;
  kept: number;
  dropped: number;
} {
  const copied: Attributes = {};
  let kept = 0;
  let dropped = 0;
  for (const key in attributes) {
    if (!Object.hasOwn(attributes, key)) continue;
    const value = attributes[key];
    if (key === '') {
      diag.warn(`Invalid attribute key: ${key}`);
      continue;
    }
    if (!isAttributeValue(value)) {
      diag.warn(`Invalid attribute value set for key: ${key}`);
      continue;
    }
    if (kept >= LIMIT) {
      dropped += 1;
      continue;
    }
    copied[key] = Array.isArray(value) ? value.slice() : value;
    kept += 1;
  }
  return { attributes: copied, kept, dropped };
}
