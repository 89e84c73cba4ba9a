import {
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type Link,
  type Span,
  type SpanContext,
  type SpanStatus,
  type TimeInput,
} from '@opentelemetry/api';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_CALL_ID } from './attribute-names.js';

/** The fields of an SDK span (`ReadableSpan`) the check reads; other spans have none of them. */
interface ReadableFields {
  readonly attributes?: Attributes;
  readonly ended?: boolean;
}

/**
 * The span that already executes tool call `callId`, when one is active in `context`: a
 * recording span, not ended, whose attributes say `gen_ai.operation.name=execute_tool` and
 * `gen_ai.tool.call.id={callId}` (the AI SDK 7's own tool span, with its OpenTelemetry
 * integration registered, runs `execute` so). The attributes are read from the SDK's span
 * object; a span that does not expose them is never borrowed.
 */
export function executingSpan(context: Context, callId: string): Span | undefined {
  if (callId === '') return undefined;
  const span = trace.getSpan(context);
  if (span === undefined || span instanceof BorrowedSpan || !span.isRecording()) return undefined;
  const { attributes, ended } = span as unknown as ReadableFields;
  if (ended === true || attributes === undefined || attributes === null) return undefined;
  return attributes[ATTR_GEN_AI_OPERATION_NAME] === 'execute_tool' &&
    attributes[ATTR_GEN_AI_TOOL_CALL_ID] === callId
    ? span
    : undefined;
}

/**
 * A tool span another instrumentation owns, lent to the tracer so a call has one span: the
 * tracer adds its stream events, stream summary and its own ids to it, and leaves the rest to
 * the owner. Attributes the owner set stay as it set them, its status and `exception` events are
 * its own, it is never renamed, and only the owner ends it. Writes after the owner ended it are
 * dropped (the SDK would warn about each).
 */
export class BorrowedSpan implements Span {
  readonly #owner: Span;
  /** Keys the tracer wrote: its own, which it may write again (the owner's it never does). */
  readonly #written = new Set<string>();

  constructor(owner: Span) {
    this.#owner = owner;
  }

  /** The owner's span: what the tool's code runs inside. */
  get owner(): Span {
    return this.#owner;
  }

  spanContext(): SpanContext {
    return this.#owner.spanContext();
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (!this.#writable() || (!this.#written.has(key) && this.#ownerHas(key))) return this;
    this.#written.add(key);
    this.#owner.setAttribute(key, value);
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const [key, value] of Object.entries(attributes)) {
      if (value !== undefined) this.setAttribute(key, value);
    }
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.#writable() && name !== 'exception') {
      this.#owner.addEvent(name, attributesOrTime, time);
    }
    return this;
  }

  addLink(link: Link): this {
    if (this.#writable()) this.#owner.addLink(link);
    return this;
  }

  addLinks(links: Link[]): this {
    if (this.#writable()) this.#owner.addLinks(links);
    return this;
  }

  /** The owner decides the outcome. */
  setStatus(_status: SpanStatus): this {
    return this;
  }

  /** The owner named it. */
  updateName(_name: string): this {
    return this;
  }

  /** The owner ends it. */
  end(_endTime?: TimeInput): void {}

  isRecording(): boolean {
    return this.#owner.isRecording();
  }

  /** The owner records its exceptions. */
  recordException(_exception: Exception, _time?: TimeInput): void {}

  #writable(): boolean {
    return this.#owner.isRecording() && (this.#owner as ReadableFields).ended !== true;
  }

  #ownerHas(key: string): boolean {
    const attributes = (this.#owner as ReadableFields).attributes;
    return attributes !== undefined && attributes !== null && key in attributes;
  }
}
