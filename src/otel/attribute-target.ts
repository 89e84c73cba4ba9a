import type { Attributes, AttributeValue } from '@opentelemetry/api';

/**
 * Where attributes are written one at a time: a span itself (its `setAttribute`), or an
 * {@link AttributeCollector} building an object. Writing straight into the span spares the
 * object that `setAttributes` would only copy key by key, which matters once per ended call.
 */
export interface AttributeTarget {
  setAttribute(key: string, value: AttributeValue): unknown;
}

/** An {@link AttributeTarget} that collects what is written into a plain attributes object. */
export class AttributeCollector implements AttributeTarget {
  readonly attributes: Attributes = {};

  setAttribute(key: string, value: AttributeValue): this {
    this.attributes[key] = value;
    return this;
  }
}
