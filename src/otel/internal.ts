/**
 * What tooltrace's own sidecar and command take from `otel` beyond its public entry: attribute
 * names they read or type, the event-type pattern check, and the call key. Not part of
 * `tooltrace/otel` (which is `index.ts`); outside `otel`, code imports `otel` only through these
 * two barrels (a lint rule in eslint.config.js holds it).
 */
export {
  ATTR_END_REASON,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_TIME_TO_FIRST_CHUNK,
  ATTR_INFLIGHT,
  ATTR_LLM_COST_USD,
  ATTR_STREAM_LAST_PROGRESS,
  ATTR_STREAM_PROGRESS,
  ATTR_STREAM_TIME_TO_FIRST_PARTIAL_MS,
} from './attribute-names.js';
export { isEventTypePattern } from './event-type-filter.js';
export { callKey } from './span-keys.js';
export { fmix32 } from './stable-hash.js';
export { GenerationalMap } from './generational-map.js';
