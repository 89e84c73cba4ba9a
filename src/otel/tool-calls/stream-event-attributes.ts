import type { Attributes, AttributeValue } from '@opentelemetry/api';
import {
  ATTR_STREAM_PAYLOAD,
  partialEventAttributes,
  progressEventAttributes,
} from '../attribute-names.js';
import type { AttributeTarget } from '../attribute-target.js';
import type { ContentCapture } from '../content-capture.js';
import { PARTIAL, type StreamKind } from './stream-sampler.js';
import { writeToolAttributes } from './tool-attributes.js';

/** The most progress previews are cut to, whatever `maxContentBytes` allows. */
const PROGRESS_PREVIEW_BYTES = 256;

/**
 * The attributes of one stream event, the same whether it becomes a span event or a log
 * record: the event's own (`own`, the tool's, under the rules of a call's attributes), the
 * sequence, the payload size (partial) or progress (progress), and, only with content capture,
 * the payload cut and redacted (a progress note to a short preview). `value` is the payload's
 * size for a partial, the progress for a progress event.
 */
export function streamEventAttributes(
  kind: StreamKind,
  sequence: number,
  value: number,
  payload: unknown,
  capture: ContentCapture | undefined,
  own?: unknown,
): Attributes {
  const partial = kind === PARTIAL;
  const attributes = partial
    ? partialEventAttributes(sequence, value)
    : progressEventAttributes(sequence, value);
  if (own !== undefined && own !== null && !Array.isArray(own)) {
    // The tracer's own keys are set already and stay (skip), as on the span.
    writeToolAttributes(new AttributeWriter(attributes), own, attributes);
  }
  if (capture !== undefined) {
    const limit = partial ? undefined : PROGRESS_PREVIEW_BYTES;
    const text = capture.text(ATTR_STREAM_PAYLOAD, payload, limit);
    if (text !== undefined) attributes[ATTR_STREAM_PAYLOAD] = text;
  }
  return attributes;
}

/** Writes into an attributes object that already exists. */
class AttributeWriter implements AttributeTarget {
  readonly #attributes: Attributes;

  constructor(attributes: Attributes) {
    this.#attributes = attributes;
  }

  setAttribute(key: string, value: AttributeValue): void {
    this.#attributes[key] = value;
  }
}
