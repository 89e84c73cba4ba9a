import type { CurrentCausation, EmitOptions, EventBus } from '../bus/index.js';
import { emitQuiet, emitVetoableQuiet } from '../bus/event-bus.js';
import { ToolCancelledError } from '../errors/index.js';
import {
  BEFORE_TOOL_RESULT,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  type ToolCall,
  type ToolResult,
  type ToolStreamPartial,
} from '../events/index.js';
import { messageOf, toolOutput } from '../streamtool/tool-output.js';

/**
 * One execution of an AI SDK tool as the bus sees it, after its `tool.invoke`: each preliminary
 * result a `tool.stream.partial`, then exactly one `tool.result` (after a vetoable
 * `before:tool.result`), whatever happens first: the output, a failure, or the abort signal
 * (a cancelled result at once, as `bridge` does). Every event is a child of the invoke: the
 * causation is taken where the execution starts, inside the invoke's handler.
 */
export class TracedExecution {
  readonly #bus: EventBus;
  readonly #call: ToolCall;
  readonly #signal: AbortSignal | undefined;
  readonly #emitOptions: EmitOptions;
  #sequence = 0;
  #settled = false;
  readonly #onAbort = (): void => this.#cancel(this.#signal?.reason);

  constructor(bus: EventBus, call: ToolCall, source: string, signal: AbortSignal | undefined) {
    this.#bus = bus;
    this.#call = call;
    this.#signal = signal;
    const causation: CurrentCausation = bus.currentCausation();
    this.#emitOptions = { source, causation };
    if (signal?.aborted === true) this.#onAbort();
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** A preliminary result of a generator tool. */
  partial(output: unknown): void {
    if (this.#settled) return;
    const payload: ToolStreamPartial = {
      tool_name: this.#call.name,
      tool_id: this.#call.id,
      turn_id: '',
      sequence: ++this.#sequence,
      payload: output,
    };
    emitQuiet(this.#bus, TOOL_STREAM_PARTIAL, payload, this.#emitOptions);
  }

  /** The final output. */
  complete(output: unknown): void {
    this.#finish({ ...this.#result(), output: toolOutput(output) });
  }

  /** The tool threw (or rejected): a failure, or a cancellation when its signal aborted. */
  fail(error: unknown): void {
    if (this.#signal?.aborted === true) {
      this.#cancel(this.#signal.reason);
      return;
    }
    const result: ToolResult = { ...this.#result(), error: messageOf(error) };
    if (error instanceof Error) result.errorType = error.name;
    this.#finish(result);
  }

  /** The AI SDK stopped reading a generator tool before it ended. */
  stopped(): void {
    this.#cancel(
      new ToolCancelledError(`tool "${this.#call.name}" was cancelled: its reader stopped`),
    );
  }

  #cancel(reason: unknown): void {
    this.#finish({ ...this.#result(), error: messageOf(reason), cancelled: true });
  }

  #finish(result: ToolResult): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    const veto = emitVetoableQuiet(this.#bus, BEFORE_TOOL_RESULT, result, this.#emitOptions);
    if (!veto.vetoed) this.#bus.emit(TOOL_RESULT, result, this.#emitOptions);
  }

  #result(): ToolResult {
    return { id: this.#call.id, name: this.#call.name, output: '' };
  }
}
