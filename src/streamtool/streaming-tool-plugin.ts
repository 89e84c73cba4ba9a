import type { BusEvent, EventBus } from '../bus/index.js';
import { PluginStateError } from '../errors/plugin-state-error.js';
import { ToolCancelledError } from '../errors/tool-cancelled-error.js';
import {
  BEFORE_TOOL_RESULT,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from '../events/index.js';
import type { ToolCall } from '../events/index.js';
import { bridge } from './bridge.js';
import type { ChannelTool } from './channel-tool.js';
import { toChannelTool, type RequestResponseTool } from './request-response-tool.js';
import { declarePluginTool } from './tool-answerers.js';

/**
 * Makes the tool for one call. It may return a streaming {@link ChannelTool} or a plain
 * {@link RequestResponseTool}; a tool with both `stream` and `execute` is treated as streaming.
 */
export type ToolFactory = (call: ToolCall) => ChannelTool | RequestResponseTool;

/** Options for {@link StreamingToolPlugin}. */
export interface StreamingToolPluginOptions {
  /**
   * `source` of the plugin's subscription and of every event its calls emit.
   * @default `streamtool.${toolName}`
   */
  source?: string;
}

/** The events a {@link StreamingToolPlugin} emits. */
const EMISSIONS: readonly string[] = Object.freeze([
  TOOL_STREAM_PROGRESS,
  TOOL_STREAM_PARTIAL,
  BEFORE_TOOL_RESULT,
  TOOL_RESULT,
]);

interface RunningCall {
  readonly controller: AbortController;
  /** Settles (never rejects) once the call emitted its result. */
  readonly settled: Promise<void>;
}

/**
 * Answers `tool.invoke` for one tool name on one bus: for each call it makes the tool with the
 * factory and runs {@link bridge} in the background, so the tool's stream and its one
 * `tool.result` are emitted as children of the `tool.invoke`. Calls for other names are left to
 * other plugins; a call for a name nothing on the bus answers gets a failed `tool.result`
 * (`error.type` `unknown_tool`) — see `declareAnsweredTools` for answerers of your own. Create it, then {@link StreamingToolPlugin.attach} it to a bus;
 * {@link StreamingToolPlugin.shutdown} stops answering, cancels the calls still running and
 * resolves once each has emitted its result. A call's failure never surfaces as an unhandled
 * rejection: it is on the bus as the call's `tool.result`.
 */
export class StreamingToolPlugin {
  /** The tool name whose calls this plugin answers. */
  readonly toolName: string;
  /** The events this plugin emits, for catalogs and wiring checks. */
  readonly emissions: readonly string[] = EMISSIONS;
  readonly #createTool: ToolFactory;
  readonly #source: string;
  readonly #running = new Set<RunningCall>();
  #bus: EventBus | undefined;
  #unsubscribe: (() => void) | undefined;
  #undeclare: (() => void) | undefined;
  #shutdown: Promise<void> | undefined;

  constructor(toolName: string, createTool: ToolFactory, options: StreamingToolPluginOptions = {}) {
    if (typeof toolName !== 'string' || toolName === '') {
      throw new TypeError('toolName must be a non-empty string');
    }
    if (typeof createTool !== 'function') throw new TypeError('createTool must be a function');
    if (options === null || typeof options !== 'object') {
      throw new TypeError('options must be an object');
    }
    if (options.source !== undefined && typeof options.source !== 'string') {
      throw new TypeError('options.source must be a string');
    }
    this.toolName = toolName;
    this.#createTool = createTool;
    this.#source = options.source ?? `streamtool.${toolName}`;
  }

  /** The `source` the plugin's events carry. */
  get source(): string {
    return this.#source;
  }

  /** How many calls are running now. */
  get running(): number {
    return this.#running.size;
  }

  /**
   * Subscribes to `tool.invoke` on `bus`. A plugin serves one bus: attaching it twice, or after
   * {@link StreamingToolPlugin.shutdown}, throws {@link PluginStateError}.
   */
  attach(bus: EventBus): void {
    if (this.#shutdown !== undefined) {
      throw new PluginStateError(`plugin for tool "${this.toolName}" is shut down`);
    }
    if (this.#bus !== undefined) {
      throw new PluginStateError(`plugin for tool "${this.toolName}" is already attached`);
    }
    if (bus === null || typeof bus !== 'object' || typeof bus.subscribe !== 'function') {
      throw new TypeError('bus must be an EventBus');
    }
    this.#bus = bus;
    this.#unsubscribe = bus.subscribe<ToolCall>(TOOL_INVOKE, (event) => this.#onInvoke(event), {
      source: this.#source,
      filter: (event) => isObject(event.payload) && event.payload.name === this.toolName,
    });
    this.#undeclare = declarePluginTool(bus, this.toolName);
  }

  /**
   * Stops answering `tool.invoke`, aborts every call still running (their results are marked
   * `cancelled`) and resolves once each has emitted its result. Safe to call twice.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#stop();
    return this.#shutdown;
  }

  async #stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#undeclare?.();
    this.#undeclare = undefined;
    const calls = [...this.#running];
    if (calls.length === 0) return;
    const reason = new ToolCancelledError(
      `tool "${this.toolName}" was cancelled: its plugin shut down`,
    );
    for (const call of calls) call.controller.abort(reason);
    await Promise.all(calls.map((call) => call.settled));
  }

  #onInvoke(event: BusEvent<ToolCall>): void {
    const bus = this.#bus;
    if (bus === undefined || this.#shutdown !== undefined) return;
    const call = event.payload;
    // Thrown here, a malformed call reaches the bus as core.error naming this plugin.
    if (typeof call.id !== 'string' || call.id === '') {
      throw new TypeError(`tool.invoke for "${this.toolName}" has no call id (payload.id)`);
    }
    let tool: ChannelTool;
    try {
      tool = this.#adapt(this.#createTool(call));
    } catch (error) {
      // The call still gets its one tool.result: a tool that fails as soon as it starts.
      tool = failingTool(this.toolName, error);
    }
    const controller = new AbortController();
    const done = (): void => void this.#running.delete(running);
    const running: RunningCall = {
      controller,
      // A rejection is the call's failure, already on the bus as its tool.result: swallowed here
      // so it never becomes an unhandled rejection.
      settled: bridge(bus, tool, call, { signal: controller.signal, source: this.#source }).then(
        done,
        done,
      ),
    };
    this.#running.add(running);
  }

  #adapt(tool: ChannelTool | RequestResponseTool): ChannelTool {
    if (isObject(tool) && typeof tool.stream === 'function') return tool as ChannelTool;
    if (isObject(tool) && typeof tool.execute === 'function') {
      return toChannelTool(tool as RequestResponseTool);
    }
    throw new TypeError(
      `the factory for tool "${this.toolName}" must return a ChannelTool (stream) ` +
        'or a RequestResponseTool (execute)',
    );
  }
}

function failingTool(name: string, error: unknown): ChannelTool {
  return {
    name,
    stream() {
      throw error;
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}
