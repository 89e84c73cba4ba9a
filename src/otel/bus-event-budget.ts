import type { Attributes, HrTime, Span } from '@opentelemetry/api';
import { ATTR_EVENTS_COALESCED, ATTR_EVENTS_RECORDED } from './attribute-names.js';
import type { AttributeTarget } from './attribute-target.js';

/**
 * How many other bus events (`plan.*`, `io.*`, …) one span keeps as span events: the first
 * `max`, the rest only counted, so a chatty event type never fills the SDK's event limit. Tool
 * call and agent spans each hold one.
 */
export class BusEventBudget {
  #recorded = 0;
  #coalesced = 0;

  /** Adds the span event unless `max` are kept already; `false` when it was only counted. */
  add(span: Span, name: string, attributes: Attributes, time: HrTime, max: number): boolean {
    if (this.#recorded >= max) {
      this.#coalesced += 1;
      return false;
    }
    this.#recorded += 1;
    span.addEvent(name, attributes, time);
    return true;
  }

  /** Writes how many were kept and only counted to `target`, when any came. */
  summarize(target: AttributeTarget): void {
    if (this.#recorded + this.#coalesced === 0) return;
    target.setAttribute(ATTR_EVENTS_RECORDED, this.#recorded);
    target.setAttribute(ATTR_EVENTS_COALESCED, this.#coalesced);
  }
}
