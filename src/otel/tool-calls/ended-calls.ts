import type { CausalIndex } from '../causal-index.js';
import { GenerationalMap } from '../generational-map.js';
import { callKey } from '../span-keys.js';
import { CallTombstones } from './call-tombstones.js';
import type { OpenCall } from './open-call.js';

/**
 * What the tool-call tracer remembers of ended calls, so that a late or replayed event is not
 * recorded as a second span: every ended call (by result, eviction, idle time or shutdown)
 * leaves a compact tombstone by invoke id (and by call key once calls are paired by call id),
 * see {@link CallTombstones}; the causal index knows recently ended calls' span contexts by call
 * key; calls without invoke ids keep their start time (a replay has the same, a reused call id
 * another).
 */
export class EndedCalls {
  readonly #index: CausalIndex;
  /** Start times of ended calls without invoke ids, by call key: tells a replay from a reuse. */
  readonly #starts: GenerationalMap<bigint>;
  readonly #tombstones: CallTombstones;

  constructor(index: CausalIndex, capacity: number, maxEndedCalls: number) {
    this.#index = index;
    this.#starts = new GenerationalMap(capacity);
    this.#tombstones = new CallTombstones(maxEndedCalls);
  }

  /**
   * Remembers a call that just ended. By call key only once events without invoke ids exist
   * (`pairsByCallId`): until then late events are always recognized by invoke id.
   */
  remember(call: OpenCall, pairsByCallId: boolean): void {
    const key = callKey(call.sessionId, call.callId);
    const byKey = (call.invokeId === '' || pairsByCallId) && key !== '';
    if (byKey) {
      this.#index.rememberEndedSpan(key, call.spanContext);
      if (call.invokeId === '') this.#starts.set(key, call.startUnixNano);
    }
    this.#tombstones.add(call.invokeId, call.invokeSequence);
    if (byKey) this.#tombstones.add(key, call.invokeSequence);
  }

  /** Whether the call with this invoke id or call key ended. */
  has(key: string): boolean {
    return key !== '' && (this.#index.endedSpan(key) !== undefined || this.#tombstones.has(key));
  }

  /**
   * Whether an unknown call whose invoke had bus sequence `parentSequence` is older than the
   * calls still remembered: it ended long ago (see {@link CallTombstones.forgotten}).
   */
  forgotten(parentSequence: number): boolean {
    return this.#tombstones.forgotten(parentSequence);
  }

  /** How many calls are remembered, and in how many bytes. */
  get remembered(): { keys: number; bytes: number; forgotten: number } {
    const tombstones = this.#tombstones;
    return { keys: tombstones.size, bytes: tombstones.bytes, forgotten: tombstones.forgottenCount };
  }

  /** The start time of the ended call without an invoke id that had call key `key`, if any. */
  startOf(key: string): bigint | undefined {
    return key === '' ? undefined : this.#starts.get(key);
  }
}
