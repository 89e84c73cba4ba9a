import type { SpanContext } from '@opentelemetry/api';
import { GenerationalMap } from './generational-map.js';

/** Where a walk up the causal chain ended. */
export interface CausalAncestry {
  /** The span of the nearest ancestor that has one, if any. */
  parent: SpanContext | undefined;
  /**
   * The topmost id the walk reached: an event without a parent, or the first id the index no
   * longer (or never) knew. All events under one root share it, so it names their trace group.
   */
  rootId: string;
}

/** How far a walk goes before it gives up on a (corrupt or cyclic) chain. */
const MAX_WALK = 1024;

/**
 * Recent event ids and what they lead to, bounded: a plain event leads to its causal parent, a
 * `tool.result` leads past its call to the call's own parent (work a finished call's result
 * caused is the call's sibling, not its child), and the `tool.invoke` of an ended call leads to
 * its span. Ended calls are also remembered under their call key (session and tool call id), so
 * late and duplicate events are recognized in journals without event ids. Calls still open are
 * not here: the walk asks the open calls first.
 */
export class CausalIndex {
  readonly #entries: GenerationalMap<string | SpanContext>;

  constructor(capacity: number) {
    this.#entries = new GenerationalMap(capacity);
  }

  /** Records that the event `id` was caused by `parentId` (`''` for a root event). */
  rememberEvent(id: string, parentId: string): void {
    this.#entries.set(id, parentId);
  }

  /**
   * Records an ended span under the id of the event that started it (a `tool.invoke`, an agent
   * start event) or, for a tool call, its call key.
   */
  rememberEndedSpan(key: string, spanContext: SpanContext): void {
    this.#entries.set(key, spanContext);
  }

  /** The ended span remembered under `key` (start event id or call key), if any. */
  endedSpan(key: string): SpanContext | undefined {
    if (key === '') return undefined;
    const entry = this.#entries.get(key);
    return typeof entry === 'object' ? entry : undefined;
  }

  /** Whether the index remembers `id` at all. */
  knows(id: string): boolean {
    return this.#entries.get(id) !== undefined;
  }

  /**
   * Walks up from `parentId` to the nearest ancestor with a span. `openSpan` is consulted first
   * at every step, so a call still open is found even after the index forgot its invoke.
   */
  ancestry(
    parentId: string,
    selfId: string,
    openSpan: (id: string) => SpanContext | undefined,
  ): CausalAncestry {
    let id = parentId;
    let rootId = selfId;
    for (let steps = 0; id !== '' && steps < MAX_WALK; steps += 1) {
      rootId = id;
      const open = openSpan(id);
      if (open !== undefined) return { parent: open, rootId };
      const entry = this.#entries.get(id);
      if (entry === undefined) break;
      if (typeof entry === 'object') return { parent: entry, rootId };
      id = entry;
    }
    return { parent: undefined, rootId };
  }

  /** How many entries are held. */
  get size(): number {
    return this.#entries.size;
  }
}
