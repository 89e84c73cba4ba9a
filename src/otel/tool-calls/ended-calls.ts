import type { EndReason } from '../attribute-names.js';
import type { CausalIndex } from '../causal-index.js';
import { GenerationalMap } from '../generational-map.js';
import { callKey } from '../span-keys.js';
import type { OpenCall } from './open-call.js';

/**
 * What the tool-call tracer remembers of ended calls, so that a late or replayed event is not
 * recorded as a second span: the causal index knows ended calls by invoke id (the span core
 * puts them there) and, here, by call key; calls without invoke ids keep their start time (a
 * replay has the same, a reused call id another); calls cut short keep a mark that outlives
 * the index by far.
 */
export class EndedCalls {
  readonly #index: CausalIndex;
  /** Start times of ended calls without invoke ids, by call key: tells a replay from a reuse. */
  readonly #starts: GenerationalMap<bigint>;
  /**
   * Calls ended before their result (evicted, abandoned), by invoke id and call key. Only such
   * calls go in, so this outlives the index by far: a result that comes later is counted late,
   * never recorded as a second span with the same id.
   */
  readonly #cutShort: GenerationalMap<true>;

  constructor(index: CausalIndex, capacity: number) {
    this.#index = index;
    this.#starts = new GenerationalMap(capacity);
    this.#cutShort = new GenerationalMap(capacity);
  }

  /**
   * Remembers a call that just ended. By call key only once events without invoke ids exist
   * (`pairsByCallId`): until then late events are always recognized by invoke id.
   */
  remember(call: OpenCall, reason: EndReason, pairsByCallId: boolean): void {
    const key = callKey(call.sessionId, call.callId);
    if ((call.invokeId === '' || pairsByCallId) && key !== '') {
      this.#index.rememberEndedSpan(key, call.spanContext);
      if (call.invokeId === '') this.#starts.set(key, call.startUnixNano);
    }
    if (reason === 'evicted' || reason === 'abandoned') {
      if (call.invokeId !== '') this.#cutShort.set(call.invokeId, true);
      if (key !== '') this.#cutShort.set(key, true);
    }
  }

  /** Whether the call with this invoke id or call key ended (or was cut short). */
  has(key: string): boolean {
    return this.#index.endedSpan(key) !== undefined || this.wasCutShort(key);
  }

  /** Whether the call with this invoke id or call key ended before its result. */
  wasCutShort(key: string): boolean {
    // Calls are rarely cut short: most of the time there is nothing to look up.
    return this.#cutShort.size !== 0 && this.#cutShort.get(key) === true;
  }

  /** The start time of the ended call without an invoke id that had call key `key`, if any. */
  startOf(key: string): bigint | undefined {
    return key === '' ? undefined : this.#starts.get(key);
  }
}
