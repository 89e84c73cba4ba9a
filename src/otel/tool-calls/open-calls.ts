import type { OpenSpans } from '../open-spans.js';
import { OpenCall } from './open-call.js';

/**
 * The calls whose spans are open, in start order (the oldest at hand for eviction), findable by
 * `tool.invoke` event id (the hot path: stream events carry it as their causal parent; the span
 * core's {@link OpenSpans} holds that index for spans of both kinds) and by tool call id
 * (journals without event ids; that index is only built once such an event shows up).
 */
export class OpenCalls {
  readonly #openSpans: OpenSpans;
  /** Insertion order is start order; a call is its own key, so no string is hashed. */
  readonly #calls = new Set<OpenCall>();
  /** Built on first use: library-mode events always pair by invoke id and never need it. */
  #byCallId: Map<string, OpenCall> | undefined;
  /**
   * The call found or added by invoke id last. Stream events of a call come in runs, each with
   * its own copy of the invoke id string (a journal line's parent id): comparing it with this
   * call's id spares hashing the fresh string and probing the map, most of the time.
   */
  #recent: OpenCall | undefined;

  constructor(openSpans: OpenSpans) {
    this.#openSpans = openSpans;
  }

  /** Adds a call whose span just started (the span core indexes its invoke id). */
  add(call: OpenCall): void {
    this.#calls.add(call);
    if (call.invokeId !== '') this.#recent = call;
    if (call.callId !== '') this.#byCallId?.set(call.callId, call);
  }

  /** Takes an ended call out (the span core takes it out of the invoke id index). */
  remove(call: OpenCall): void {
    this.#calls.delete(call);
    if (this.#recent === call) this.#recent = undefined;
    if (call.callId !== '' && this.#byCallId?.get(call.callId) === call) {
      this.#byCallId.delete(call.callId);
    }
  }

  /** The open call started by the `tool.invoke` event `invokeId`. */
  byInvokeId(invokeId: string): OpenCall | undefined {
    const recent = this.#recent;
    if (recent !== undefined && recent.invokeId === invokeId) return recent;
    const span = this.#openSpans.byStartId(invokeId);
    if (!(span instanceof OpenCall)) return undefined;
    this.#recent = span;
    return span;
  }

  /**
   * The open call with tool call id `callId` in session `sessionId`. Only the newest call per
   * id is indexed; an older one with the same id (another session) is found by a scan.
   */
  byCallId(sessionId: string, callId: string): OpenCall | undefined {
    if (callId === '') return undefined;
    const call = (this.#byCallId ??= this.#indexCallIds()).get(callId);
    if (call === undefined || call.sessionId === sessionId) return call;
    let newest: OpenCall | undefined;
    for (const other of this.#calls) {
      if (other.callId === callId && other.sessionId === sessionId) newest = other;
    }
    return newest;
  }

  /**
   * Whether calls have been looked up by tool call id yet, that is, whether events that lack
   * their invoke's id were ever seen. Until then nothing needs call-id bookkeeping.
   */
  get pairsByCallId(): boolean {
    return this.#byCallId !== undefined;
  }

  #indexCallIds(): Map<string, OpenCall> {
    const byCallId = new Map<string, OpenCall>();
    for (const call of this.#calls) if (call.callId !== '') byCallId.set(call.callId, call);
    return byCallId;
  }

  get oldest(): OpenCall | undefined {
    return this.#calls.values().next().value;
  }

  get size(): number {
    return this.#calls.size;
  }

  /** Every open call, oldest first; ending the current one while iterating is safe. */
  [Symbol.iterator](): IterableIterator<OpenCall> {
    return this.#calls.values();
  }
}
