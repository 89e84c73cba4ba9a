import type { BusEvent, EventBus } from '../bus/index.js';
import { UnknownToolError } from '../errors/unknown-tool-error.js';
import { TOOL_INVOKE, type ToolCall } from '../events/index.js';
import { bridge } from './bridge.js';
import type { ChannelTool } from './channel-tool.js';
import { ToolChannel } from './tool-channel.js';

/** `error.type` of the `tool.result` that answers a call for a tool nothing answers. */
export const ERROR_TYPE_UNKNOWN_TOOL = 'unknown_tool';

/** Which tool names a bus answers; what a program declares with {@link declareAnsweredTools}. */
export type AnsweredTools = readonly string[] | ((toolName: string) => boolean);

/** `source` of the `tool.result` that answers a call for an unknown tool. */
const UNKNOWN_TOOL_SOURCE = 'streamtool.unknown';

/** What one bus answers, and the subscription that fails the calls for anything else. */
class AnswerRegistry {
  readonly #names = new Map<string, number>();
  readonly #predicates = new Set<(toolName: string) => boolean>();
  /**
   * The calls being emitted by whoever answers them (`runAsInvokeHandler`), only while their
   * `tool.invoke` is dispatched: the filter below runs within that dispatch. A `WeakSet` of every
   * call ever claimed cost 1.3 µs per add (its table grows until a collection clears it).
   */
  readonly #claimed = new Set<object>();
  readonly #bus: EventBus;
  #unsubscribe: (() => void) | undefined;

  constructor(bus: EventBus) {
    this.#bus = bus;
  }

  declare(tools: AnsweredTools, failUnknown: boolean): () => void {
    if (typeof tools === 'function') {
      // A fresh wrapper per declaration, so declaring one predicate twice takes two undos.
      const predicate = (name: string): boolean => tools(name);
      this.#predicates.add(predicate);
      if (failUnknown) this.#failUnknown();
      return once(() => void this.#predicates.delete(predicate));
    }
    const names = [...tools];
    for (const name of names) this.#names.set(name, (this.#names.get(name) ?? 0) + 1);
    if (failUnknown) this.#failUnknown();
    return once(() => {
      for (const name of names) {
        const count = (this.#names.get(name) ?? 1) - 1;
        if (count === 0) this.#names.delete(name);
        else this.#names.set(name, count);
      }
    });
  }

  claim(call: ToolCall): () => void {
    const claimed = this.#claimed;
    if (claimed.has(call)) return noop;
    claimed.add(call);
    return () => void claimed.delete(call);
  }

  #answers(event: BusEvent<ToolCall>): boolean {
    const call = event.payload;
    if (call === null || typeof call !== 'object' || this.#claimed.has(call)) return true;
    const name = call.name;
    if (typeof name !== 'string') return false;
    if (this.#names.has(name)) return true;
    for (const predicate of this.#predicates) {
      try {
        if (predicate(name)) return true;
      } catch {
        // A predicate that throws claims nothing; the others still decide.
      }
    }
    return false;
  }

  /** From the first plugin on: a call for a name nothing answers gets a failed result. */
  #failUnknown(): void {
    if (this.#unsubscribe !== undefined) return;
    this.#unsubscribe = this.#bus.subscribe<ToolCall>(
      TOOL_INVOKE,
      (event) => {
        const call = event.payload;
        // Without an id there is no result to send; the call is malformed, not unknown.
        if (typeof call.id !== 'string' || call.id === '') return;
        const name = typeof call.name === 'string' ? call.name : String(call.name);
        const known = [...this.#names.keys()].sort();
        bridge(this.#bus, unknownTool(name, known), call, { source: UNKNOWN_TOOL_SOURCE }).catch(
          () => {
            // The failure is the call's tool.result, already on the bus.
          },
        );
      },
      { source: UNKNOWN_TOOL_SOURCE, filter: (event) => !this.#answers(event) },
    );
  }
}

const registries = new WeakMap<EventBus, AnswerRegistry>();

function registryOf(bus: EventBus): AnswerRegistry {
  let registry = registries.get(bus);
  if (registry === undefined) {
    registry = new AnswerRegistry(bus);
    registries.set(bus, registry);
  }
  return registry;
}

/**
 * Declares that something on `bus` answers `tool.invoke` for `tools` (names, or a predicate on
 * the name) other than a `StreamingToolPlugin`: a subscriber of your own, a process on the other
 * side of a sidecar. Once a `StreamingToolPlugin` is attached to a bus, a call for a name no
 * plugin and no declaration answers gets a failed `tool.result` at once (`error.type`
 * `unknown_tool`, an {@link UnknownToolError} naming the known tools), so the caller can tell
 * the model and the call's span ends; on a bus with no plugin nothing is answered for you.
 * Returns the undo. Calls the adapters answer themselves (`serveMcpTools`, the AI SDK wrapper)
 * need no declaration.
 */
export function declareAnsweredTools(bus: EventBus, tools: AnsweredTools): () => void {
  if (bus === null || typeof bus !== 'object' || typeof bus.subscribe !== 'function') {
    throw new TypeError('bus must be an EventBus');
  }
  if (typeof tools !== 'function' && !Array.isArray(tools)) {
    throw new TypeError('tools must be an array of tool names or a function of the name');
  }
  if (Array.isArray(tools) && !tools.every((name) => typeof name === 'string')) {
    throw new TypeError('tools must be an array of tool names (strings)');
  }
  return registryOf(bus).declare(tools, false);
}

/** A plugin's declaration: it also turns on the failing of unknown calls. Internal. */
export function declarePluginTool(bus: EventBus, toolName: string): () => void {
  return registryOf(bus).declare([toolName], true);
}

/**
 * Marks one call as answered by whoever emits it (`runAsInvokeHandler`), until the returned
 * function is called: around the dispatch of its `tool.invoke`. Internal.
 */
export function claimCall(bus: EventBus, call: ToolCall): () => void {
  return registryOf(bus).claim(call);
}

function noop(): void {}

function unknownTool(name: string, known: readonly string[]): ChannelTool {
  return {
    name,
    stream() {
      const channel = new ToolChannel({ capacity: 1 });
      void channel.fail(new UnknownToolError(name, known), { errorType: ERROR_TYPE_UNKNOWN_TOOL });
      return channel;
    },
  };
}

function once(undo: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    undo();
  };
}
