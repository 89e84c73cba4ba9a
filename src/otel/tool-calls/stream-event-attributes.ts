import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_STREAM_PAYLOAD,
  partialEventAttributes,
  progressEventAttributes,
} from '../attribute-names.js';
import type { ContentCapture } from '../content-capture.js';
import { PARTIAL, type StreamKind } from './stream-sampler.js';

/** The most progress previews are cut to, whatever `maxContentBytes` allows. */
const PROGRESS_PREVIEW_BYTES = 256;

/**
 * The attributes of one stream event, the same whether it becomes a span event or a log
 * record: the sequence, the payload size (partial) or progress (progress), and, only with
 * content capture, the payload cut and redacted (a progress note to a short preview). `value`
 * is the payload's size for a partial, the progress for a progress event.
 */
export function streamEventAttributes(
  kind: StreamKind,
  sequence: number,
  value: number,
  payload: unknown,
  capture: ContentCapture | undefined,
): Attributes {
  const partial = kind === PARTIAL;
  const attributes = partial
    ? partialEventAttributes(sequence, value)
    : progressEventAttributes(sequence, value);
  if (capture !== undefined) {
    const limit = partial ? undefined : PROGRESS_PREVIEW_BYTES;
    const text = capture.text(ATTR_STREAM_PAYLOAD, payload, limit);
    if (text !== undefined) attributes[ATTR_STREAM_PAYLOAD] = text;
  }
  return attributes;
}
