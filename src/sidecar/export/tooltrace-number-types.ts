import {
  ATTR_GEN_AI_TIME_TO_FIRST_CHUNK,
  ATTR_LLM_COST_USD,
  ATTR_STREAM_LAST_PROGRESS,
  ATTR_STREAM_PROGRESS,
  ATTR_STREAM_TIME_TO_FIRST_PARTIAL_MS,
} from '../../otel/internal.js';
import { NumberTypes } from '../../otlp/index.js';

/** tooltrace's own attributes whose values are fractional by nature: always doubles. */
export const FRACTIONAL_ATTRIBUTES: readonly string[] = [
  ATTR_GEN_AI_TIME_TO_FIRST_CHUNK,
  ATTR_LLM_COST_USD,
  ATTR_STREAM_LAST_PROGRESS,
  ATTR_STREAM_PROGRESS,
  ATTR_STREAM_TIME_TO_FIRST_PARTIAL_MS,
];

/**
 * The number types the sidecar's encoders start from: tooltrace's fractional attributes are
 * doubles from the first span on, even when a value happens to be whole (progress 0 or 1).
 */
export function tooltraceNumberTypes(): NumberTypes {
  return new NumberTypes(FRACTIONAL_ATTRIBUTES);
}
