import type { ContainerSpan } from './container-span.js';
import type { OpenSpan } from './open-span.js';

/**
 * The open spans of both kinds by the id of the event that started them (what causal walks and
 * the placing of other bus events look for), and the open containers by span id (whose
 * children's activity is theirs). The span core adds a span when it starts and removes it when
 * it ends; nothing else writes here.
 */
export class OpenSpans {
  readonly #byStartId = new Map<string, OpenSpan>();
  readonly #containers = new Map<string, ContainerSpan>();

  /** Makes `span` findable by the id of its start event (none when it has no id). */
  add(span: OpenSpan): void {
    if (span.startEventId !== '') this.#byStartId.set(span.startEventId, span);
  }

  /** Makes `span` findable by its start event and, as the parent of later spans, by span id. */
  addContainer(span: ContainerSpan): void {
    this.add(span);
    this.#containers.set(span.spanContext.spanId, span);
  }

  /** Takes `span` out of both indexes (leaving an entry another span holds under its key). */
  remove(span: OpenSpan): void {
    const startId = span.startEventId;
    if (startId !== '' && this.#byStartId.get(startId) === span) this.#byStartId.delete(startId);
    if (this.#containers.size === 0) return;
    const spanId = span.spanContext.spanId;
    if (this.#containers.get(spanId) === span) this.#containers.delete(spanId);
  }

  /** The open span the event `id` started, if any. */
  byStartId(id: string): OpenSpan | undefined {
    return this.#byStartId.get(id);
  }

  /** The open container whose span id is `spanId`, if any. */
  container(spanId: string): ContainerSpan | undefined {
    if (spanId === '' || this.#containers.size === 0) return undefined;
    return this.#containers.get(spanId);
  }
}
