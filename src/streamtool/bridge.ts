import type { CurrentCausation, EmitOptions, EventBus } from '../bus/index.js';
import { CORE_ERROR, type CoreErrorPayload } from '../bus/index.js';
import { emitQuiet, emitVetoableQuiet } from '../bus/event-bus.js';
import { MalformedToolEventError } from '../errors/malformed-tool-event-error.js';
import { SequenceOrderError } from '../errors/sequence-order-error.js';
import { ToolStreamError } from '../errors/tool-stream-error.js';
import {
  BEFORE_TOOL_RESULT,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from '../events/index.js';
import type {
  ToolAttributes,
  ToolAttributeValue,
  ToolCall,
  ToolResult,
  ToolStreamPartial,
  ToolStreamProgress,
} from '../events/index.js';
import type { ChannelTool } from './channel-tool.js';
import { ToolChannel } from './tool-channel.js';
import { isProgressFraction, type ToolEvent } from './tool-event.js';
import { messageOf, toolOutput } from './tool-output.js';

/** Options for {@link bridge}. */
export interface BridgeOptions {
  /**
   * Aborting it cancels the call: bridge emits a `tool.result` marked `cancelled`, closes the
   * tool's iterator and rejects with the abort reason, without waiting for the tool. The tool
   * receives it as the signal of `stream()`.
   */
  signal?: AbortSignal;
  /**
   * `source` of every event bridge emits.
   * @default `streamtool.${tool.name}`
   */
  source?: string;
}

/** The signal a tool gets when the caller gave none: it never aborts. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Runs one call of a streaming tool and projects its events onto the bus: `progress` becomes
 * `tool.stream.progress`, `partial` becomes `tool.stream.partial`, and `complete` or `error`
 * becomes exactly one `tool.result` (after a vetoable `before:tool.result`; a veto suppresses
 * it). Every event bridge emits carries the causation in force where bridge was called, so when
 * a `tool.invoke` handler starts it — now or later from a promise or a timer — they are all
 * children of that `tool.invoke`. A stream that ends without a terminal event completes with the
 * last partial's payload; malformed events are reported as `core.error` and skipped. Resolves on
 * completion; rejects with the tool's error, with what `stream()` or the iterator threw, or with
 * the abort reason — always after the one `tool.result` was emitted. Bridge never emits
 * synchronously from within the call to `bridge` itself.
 */
export function bridge(
  bus: EventBus,
  tool: ChannelTool,
  call: ToolCall,
  options: BridgeOptions = {},
): Promise<void> {
  const problem = argumentProblem(bus, tool, call, options);
  if (problem !== undefined) return Promise.reject(new TypeError(problem));
  return new BridgeRun(bus, tool, call, options).promise;
}

/** One bridged call: the state between `bridge` being called and its promise settling. */
class BridgeRun {
  readonly promise: Promise<void>;
  readonly #bus: EventBus;
  readonly #tool: ChannelTool;
  readonly #call: ToolCall;
  readonly #signal: AbortSignal | undefined;
  readonly #toolName: string;
  readonly #turnId: string;
  /** Causation captured at the start; the abort listener runs outside the caller's context. */
  readonly #causation: CurrentCausation;
  readonly #emitOptions: EmitOptions;
  #resolve!: () => void;
  #reject!: (error: unknown) => void;
  #settled = false;
  #iterator: AsyncIterator<ToolEvent> | undefined;
  /** The tool's stream when it is a ToolChannel, whose annotations every ending carries. */
  #channel: ToolChannel | undefined;
  #previousSequence = 0;
  #lastPartial: unknown = undefined;
  /** Span attributes the tool's events carried, for the result; created on the first. */
  #attributes: Record<string, ToolAttributeValue> | undefined;
  readonly #onAbort = (): void => {
    const reason: unknown = this.#signal?.reason;
    this.#finish({ ...this.#result(), error: messageOf(reason), cancelled: true }, false, reason);
    this.#closeIterator();
  };

  constructor(bus: EventBus, tool: ChannelTool, call: ToolCall, options: BridgeOptions) {
    this.#bus = bus;
    this.#tool = tool;
    this.#call = call;
    this.#signal = options.signal;
    this.#toolName = typeof tool.name === 'string' ? tool.name : String(tool.name);
    this.#turnId = call.turnId ?? '';
    this.#causation = bus.currentCausation();
    this.#emitOptions = {
      source: options.source ?? `streamtool.${this.#toolName}`,
      causation: this.#causation,
    };
    this.promise = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    if (this.#signal?.aborted === true) {
      // Answer on the next microtask so bridge never emits from within its own call.
      queueMicrotask(this.#onAbort);
      return;
    }
    // One listener for the whole call, instead of racing every next() against the signal.
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#pump().catch((error: unknown) => this.#failWith(error));
  }

  async #pump(): Promise<void> {
    // Awaiting first defers the tool's start past the caller's synchronous code (for example the
    // rest of the tool.invoke dispatch), so nothing is emitted from within bridge() itself.
    await Promise.resolve();
    if (this.#settled) return;
    let iterator: AsyncIterator<ToolEvent>;
    try {
      const tool = this.#tool;
      if (typeof tool.stream !== 'function') {
        throw new TypeError(`tool "${this.#toolName}" has no stream(signal, input) method`);
      }
      const iterable = await tool.stream(this.#signal ?? NEVER_ABORTED, this.#call.arguments ?? {});
      if (
        iterable === null ||
        typeof iterable !== 'object' ||
        typeof iterable[Symbol.asyncIterator] !== 'function'
      ) {
        throw new TypeError(`tool "${this.#toolName}" stream() did not return an AsyncIterable`);
      }
      if (iterable instanceof ToolChannel) this.#channel = iterable;
      iterator = iterable[Symbol.asyncIterator]();
    } catch (error) {
      this.#failWith(error);
      return;
    }
    this.#iterator = iterator;
    if (this.#settled) {
      // Cancelled while stream() was still starting: let the tool clean up.
      this.#closeIterator();
      return;
    }
    for (;;) {
      let step: IteratorResult<ToolEvent>;
      try {
        // Awaited directly: one promise per event, as in a bare for-await loop.
        step = await iterator.next();
      } catch (error) {
        this.#failWith(error);
        return;
      }
      if (this.#settled) return;
      if (step.done === true) {
        // The seed's rule: a stream that just ends completed with its last partial output.
        this.#finish({ ...this.#result(), output: toolOutput(this.#lastPartial) }, true, undefined);
        return;
      }
      if (this.#project(step.value)) {
        this.#closeIterator();
        return;
      }
    }
  }

  /** Projects one event; returns true when it was terminal. */
  #project(event: ToolEvent): boolean {
    if (event === null || typeof event !== 'object') {
      this.#malformed('event', event, 'an object with a kind');
      return false;
    }
    const kind = event.kind;
    if (kind !== 'partial' && kind !== 'progress' && kind !== 'complete' && kind !== 'error') {
      this.#malformed('kind', kind, '"progress", "partial", "complete" or "error"');
      return false;
    }
    const progress = event.progress;
    if (progress !== undefined && !isProgressFraction(progress)) {
      this.#malformed('progress', progress, 'a number from 0 to 1, or -1 when unknown');
      return false;
    }
    let sequence = event.sequence;
    if (sequence === undefined) {
      sequence = this.#previousSequence + 1;
    } else if (!Number.isInteger(sequence) || sequence < 1) {
      this.#malformed('sequence', sequence, 'a positive integer');
      return false;
    } else if (sequence <= this.#previousSequence) {
      this.#report(
        new SequenceOrderError(this.#toolName, this.#call.id, sequence, this.#previousSequence),
      );
    }
    this.#previousSequence = sequence;
    const attributes = event.attributes === undefined ? undefined : this.#gather(event.attributes);

    switch (kind) {
      case 'partial': {
        this.#lastPartial = event.payload;
        const payload: ToolStreamPartial = {
          tool_name: this.#toolName,
          tool_id: this.#call.id,
          turn_id: this.#turnId,
          sequence,
          payload: event.payload,
        };
        if (attributes !== undefined) payload.attributes = attributes;
        emitQuiet(this.#bus, TOOL_STREAM_PARTIAL, payload, this.#emitOptions);
        return false;
      }
      case 'progress': {
        const payload: ToolStreamProgress = {
          tool_name: this.#toolName,
          tool_id: this.#call.id,
          turn_id: this.#turnId,
          sequence,
          progress: progress ?? -1,
          payload: event.payload,
        };
        if (attributes !== undefined) payload.attributes = attributes;
        emitQuiet(this.#bus, TOOL_STREAM_PROGRESS, payload, this.#emitOptions);
        return false;
      }
      case 'complete':
        this.#finish({ ...this.#result(), output: toolOutput(event.payload) }, true, undefined);
        return true;
      case 'error': {
        const error = streamError(this.#toolName, event.error);
        const result: ToolResult = { ...this.#result(), error: error.message };
        const errorType = event.errorType;
        if (typeof errorType === 'string' && errorType !== '') result.errorType = errorType;
        else if (errorType !== undefined) {
          this.#malformed('errorType', errorType, 'a non-empty string', 'errorType left out');
        }
        this.#finish(result, false, error);
        return true;
      }
    }
  }

  /**
   * Keeps the attributes of one event for the result; a bad one is reported and left out.
   * Returns the good ones (the stream event's own), `undefined` when none is.
   */
  #gather(attributes: unknown): ToolAttributes | undefined {
    if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) {
      this.#malformed('attributes', attributes, 'an object', 'attributes left out');
      return undefined;
    }
    let good: Record<string, ToolAttributeValue> | undefined;
    for (const [key, value] of Object.entries(attributes)) {
      if (isAttributeValue(value)) {
        this.#attributes ??= {};
        this.#attributes[key] = value;
        good ??= {};
        good[key] = value;
      } else {
        this.#malformed(
          `attributes.${key}`,
          value,
          'a string, a finite number, a boolean or an array of one of those',
          'attribute left out',
        );
      }
    }
    return good;
  }

  /** A failure of the tool itself: stream() or the iterator threw. */
  #failWith(error: unknown): void {
    this.#finish({ ...this.#result(), error: messageOf(error) }, false, error);
  }

  /** Emits the call's one `tool.result` (unless vetoed) and settles the bridge promise. */
  #finish(result: ToolResult, succeeded: boolean, error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    const annotations = this.#channel?.annotations;
    if (annotations !== undefined) {
      // The events' own attributes were gathered already and win over the annotations.
      const fromEvents = this.#attributes;
      this.#attributes = undefined;
      this.#gather(annotations);
      const fromAnnotations = this.#attributes as Record<string, ToolAttributeValue> | undefined;
      this.#attributes = { ...fromAnnotations, ...fromEvents };
      result.attributes = this.#attributes;
    }
    try {
      const veto = emitVetoableQuiet(this.#bus, BEFORE_TOOL_RESULT, result, this.#emitOptions);
      if (!veto.vetoed) this.#bus.emit(TOOL_RESULT, result, this.#emitOptions);
    } finally {
      if (succeeded) this.#resolve();
      else this.#reject(error);
    }
  }

  #result(): ToolResult {
    const result: ToolResult = { id: this.#call.id, name: this.#call.name, output: '' };
    if (this.#call.turnId !== undefined) result.turnId = this.#call.turnId;
    if (this.#attributes !== undefined) result.attributes = this.#attributes;
    return result;
  }

  /** Tells the tool bridge stops reading, so a generator's `finally` runs; never waits for it. */
  #closeIterator(): void {
    const iterator = this.#iterator;
    this.#iterator = undefined;
    if (iterator?.return === undefined) return;
    try {
      Promise.resolve(iterator.return()).catch(ignore);
    } catch {
      // A tool whose return() throws has nothing left for bridge to clean up.
    }
  }

  #malformed(field: string, value: unknown, expected: string, skipped?: string): void {
    this.#report(
      new MalformedToolEventError(this.#toolName, this.#call.id, field, value, expected, skipped),
    );
  }

  #report(error: Error): void {
    const payload: CoreErrorPayload = {
      error,
      message: error.message,
      eventType: TOOL_INVOKE,
      eventId: this.#causation.parentId,
      source: this.#emitOptions.source ?? '',
    };
    this.#bus.emit(CORE_ERROR, payload, this.#emitOptions);
  }
}

/** The error an `error` event stands for, made an `Error` when the tool gave something else. */
function streamError(toolName: string, error: unknown): Error {
  if (error instanceof Error) return error;
  if (error === undefined || error === null) {
    return new ToolStreamError(`tool "${toolName}" reported an error event without an error`);
  }
  return new ToolStreamError(messageOf(error), { cause: error });
}

function ignore(): void {}

/** Whether `value` is what an OpenTelemetry attribute may hold; mixed arrays are not. */
function isAttributeValue(value: unknown): value is ToolAttributeValue {
  if (typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (!Array.isArray(value)) return false;
  const first: unknown = value[0];
  const kind = typeof first;
  if (kind !== 'string' && kind !== 'number' && kind !== 'boolean' && first !== undefined) {
    return false;
  }
  return value.every(
    (item: unknown) => typeof item === kind && (kind !== 'number' || Number.isFinite(item)),
  );
}

/** What is wrong with bridge's arguments, or undefined when nothing is. */
function argumentProblem(
  bus: EventBus,
  tool: ChannelTool,
  call: ToolCall,
  options: BridgeOptions,
): string | undefined {
  if (bus === null || typeof bus !== 'object' || typeof bus.emitVetoable !== 'function') {
    return 'bus must be an EventBus';
  }
  if (tool === null || typeof tool !== 'object') {
    return 'tool must be a ChannelTool object';
  }
  if (call === null || typeof call !== 'object') {
    return 'call must be a ToolCall object';
  }
  if (typeof call.id !== 'string' || call.id === '') {
    return 'call.id must be a non-empty string';
  }
  if (typeof call.name !== 'string') return 'call.name must be a string';
  if (
    call.arguments !== undefined &&
    (call.arguments === null || typeof call.arguments !== 'object')
  ) {
    return 'call.arguments must be an object';
  }
  if (options === null || typeof options !== 'object') {
    return 'options must be an object';
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    return 'options.signal must be an AbortSignal';
  }
  if (options.source !== undefined && typeof options.source !== 'string') {
    return 'options.source must be a string';
  }
  return undefined;
}
