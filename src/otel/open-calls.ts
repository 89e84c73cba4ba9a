import type { OpenCall } from './open-call.js';

/**
 * The calls whose spans are open, findable by `tool.invoke` event id (the hot path: stream
 * events carry it as their causal parent) and by tool call id (journals without event ids; that
 * index is only built once such an event shows up), and kept in start order in an intrusive
 * list so the oldest is at hand for eviction and removal costs no hashing.
 */
export class OpenCalls {
  readonly #byInvokeId = new Map<string, OpenCall>();
  /** Built on first use: library-mode events always pair by invoke id and never need it. */
  #byCallId: Map<string, OpenCall> | undefined;
  /**
   * The call found or added by invoke id last. Stream events of a call come in runs, each with
   * its own copy of the invoke id string (a journal line's parent id): comparing it with this
   * call's id spares hashing the fresh string and probing the map, most of the time.
   */
  #recent: OpenCall | undefined;
  #oldest: OpenCall | undefined;
  #newest: OpenCall | undefined;
  #size = 0;

  add(call: OpenCall): void {
    call.previous = this.#newest;
    call.next = undefined;
    if (this.#newest === undefined) this.#oldest = call;
    else this.#newest.next = call;
    this.#newest = call;
    this.#size += 1;
    if (call.invokeId !== '') {
      this.#byInvokeId.set(call.invokeId, call);
      this.#recent = call;
    }
    if (call.callId !== '') this.#byCallId?.set(call.callId, call);
  }

  /** Makes a call found by the invoke id it learned late. */
  indexInvokeId(call: OpenCall): void {
    if (call.invokeId !== '') this.#byInvokeId.set(call.invokeId, call);
  }

  remove(call: OpenCall): void {
    const { previous, next } = call;
    if (previous === undefined) this.#oldest = next;
    else previous.next = next;
    if (next === undefined) this.#newest = previous;
    else next.previous = previous;
    call.previous = undefined;
    call.next = undefined;
    this.#size -= 1;
    if (this.#recent === call) this.#recent = undefined;
    // An invoke id belongs to one call (duplicates are dropped), so no ownership check.
    if (call.invokeId !== '') this.#byInvokeId.delete(call.invokeId);
    if (call.callId !== '' && this.#byCallId?.get(call.callId) === call) {
      this.#byCallId.delete(call.callId);
    }
  }

  /** The open call started by the `tool.invoke` event `invokeId`. */
  byInvokeId(invokeId: string): OpenCall | undefined {
    const recent = this.#recent;
    if (recent !== undefined && recent.invokeId === invokeId) return recent;
    const call = this.#byInvokeId.get(invokeId);
    if (call !== undefined) this.#recent = call;
    return call;
  }

  /**
   * The open call with tool call id `callId` in session `sessionId`. Only the newest call per
   * id is indexed; an older one with the same id (another session) is found by a scan.
   */
  byCallId(sessionId: string, callId: string): OpenCall | undefined {
    if (callId === '') return undefined;
    const call = (this.#byCallId ??= this.#indexCallIds()).get(callId);
    if (call === undefined || call.sessionId === sessionId) return call;
    for (let other = this.#newest; other !== undefined; other = other.previous) {
      if (other.callId === callId && other.sessionId === sessionId) return other;
    }
    return undefined;
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
    for (const call of this) if (call.callId !== '') byCallId.set(call.callId, call);
    return byCallId;
  }

  get oldest(): OpenCall | undefined {
    return this.#oldest;
  }

  get size(): number {
    return this.#size;
  }

  /** Every open call, oldest first; removing the current one while iterating is safe. */
  *[Symbol.iterator](): IterableIterator<OpenCall> {
    let call = this.#oldest;
    while (call !== undefined) {
      const next = call.next;
      yield call;
      call = next;
    }
  }
}
