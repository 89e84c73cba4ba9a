import type { EventInit } from '../../bus/index.js';
import { TOOL_INVOKE, TOOL_RESULT } from '../../events/index.js';
import { callKey, GenerationalMap } from '../../otel/internal.js';
import { OffsetPins } from './offset-pins.js';

/** Root offsets and orphans remembered, in each of two generations. */
const MAX_REMEMBERED = 100_000;

/** Cut points kept at most; past it every other one is dropped (the checkpoint only lags). */
const MAX_CUT_POINTS = 8192;

/**
 * Decides how far a followed file may be checkpointed. Two rules, both needed for "a restart
 * re-exports only identical spans and loses none":
 *
 * 1. **Pins.** A span pins the offset of the line its call's causal chain began at (its *root*)
 *    from the moment it starts until it was exported. Re-reading from there rebuilds the call —
 *    and its trace id, which is derived from the root — exactly.
 * 2. **Cut points.** The checkpoint only stops between lines where no line read after the cut
 *    depends on a line before it (its root lies at or after the cut). Otherwise a restart would
 *    re-read a call without the events its trace id and parent came from, and export a different
 *    span under the same span id.
 *
 * The checkpoint is the largest cut point at or below the lowest pin and the end of the last
 * complete line, and it never moves backwards. Roots are found by event id (the `parent_id` of a
 * line), by tool call id for journals without event ids, and a line that names a parent not read
 * yet (out of order) lowers that parent's root when it arrives.
 */
export class CheckpointTracker {
  readonly #pins = new OffsetPins();
  /** Ascending line starts that are safe to resume from (see rule 2). */
  #cuts: number[];
  #lineEnd: number;
  #saved: number;
  readonly #readBefore: number;
  /** Root offsets by event id and by call key (`\u0001` + session + call id), two generations. */
  readonly #roots: GenerationalMap<number>;
  /** Earliest offset of a line naming each parent not read yet, two generations. */
  readonly #orphans: GenerationalMap<number>;

  /**
   * @param readBefore - how far the run before a restart read (the checkpoint's `read`): lines
   * that end there or before are read again only to export their calls whole.
   */
  constructor(startOffset: number, readBefore = startOffset) {
    this.#cuts = [startOffset];
    this.#lineEnd = startOffset;
    this.#saved = startOffset;
    this.#roots = new GenerationalMap(MAX_REMEMBERED);
    this.#orphans = new GenerationalMap(MAX_REMEMBERED);
    this.#readBefore = readBefore;
  }

  /** Stream position just past the last line handled. */
  get lineEnd(): number {
    return this.#lineEnd;
  }

  /** How far lines were read, by this run or the one before: what the checkpoint's `read` says. */
  get read(): number {
    return Math.max(this.#lineEnd, this.#readBefore);
  }

  /** Whether the line ending at `lineEnd` was read by the run before a restart. */
  readBefore(lineEnd: number): boolean {
    return lineEnd <= this.#readBefore;
  }

  /** How many spans hold the checkpoint back. */
  get pinnedSpans(): number {
    return this.#pins.size;
  }

  /**
   * The root offset of the line starting at `lineStart` that carries `event` (decoded, about to
   * be emitted with id `eventId`, `''` when the id was made up), and remembers it for the lines
   * that follow.
   */
  rootOf(lineStart: number, event: EventInit, eventId: string): number {
    const parentId = event.causation?.parentId ?? '';
    let root: number | undefined;
    if (parentId !== '') {
      root = this.#roots.get(parentId);
      if (root === undefined) this.#noteOrphan(parentId, lineStart);
    }
    const callKey =
      event.type === TOOL_INVOKE || (root === undefined && eventId === '') ? callKeyOf(event) : '';
    if (root === undefined && callKey !== '' && event.type !== TOOL_INVOKE) {
      root = this.#roots.get(callKey);
    }
    root ??= lineStart;
    if (eventId !== '') {
      const early = this.#orphans.get(eventId);
      if (early !== undefined && early < root) root = early;
      this.#remember(eventId, root);
    }
    if (callKey !== '' && event.type === TOOL_INVOKE) this.#remember(callKey, root);
    return root;
  }

  /** Records that the line ending at `lineEnd` was handled, and what its root was. */
  lineDone(root: number, lineEnd: number): void {
    const cuts = this.#cuts;
    while (cuts.length > 0 && cuts[cuts.length - 1]! > root) cuts.pop();
    cuts.push(lineEnd);
    this.#lineEnd = lineEnd;
    if (cuts.length > MAX_CUT_POINTS) {
      // Keep the first and the last; thinning only makes the checkpoint more conservative.
      this.#cuts = cuts.filter((_, index) => index % 2 === 0 || index === cuts.length - 1);
    }
  }

  /** Holds the checkpoint at or before `offset` until {@link unpin}`(span)`. */
  pin(span: object, offset: number): void {
    this.#pins.pin(span, offset);
  }

  /** Pins `span` where the checkpoint stands now (a span started outside any line). */
  pinHere(span: object): void {
    this.#pins.pin(span, this.#saved);
  }

  unpin(span: object): void {
    this.#pins.unpin(span);
  }

  /**
   * The offset a restart may resume from. With `holdBack` (events are waiting in the tracer's
   * reorder window, and their lines are not pinned by any span yet) it does not advance.
   */
  checkpoint(holdBack = false): number {
    if (holdBack) return this.#saved;
    const bound = Math.min(this.#pins.lowest() ?? Number.POSITIVE_INFINITY, this.#lineEnd);
    const cuts = this.#cuts;
    // Largest cut point <= bound.
    let low = 0;
    let high = cuts.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (cuts[middle]! <= bound) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    if (found < 0 || cuts[found]! <= this.#saved) return this.#saved;
    this.#saved = cuts[found]!;
    if (found > 0) cuts.splice(0, found);
    return this.#saved;
  }

  #remember(key: string, root: number): void {
    this.#roots.set(key, root);
  }

  #noteOrphan(parentId: string, offset: number): void {
    if (this.#orphans.get(parentId) === undefined) this.#orphans.set(parentId, offset);
  }
}

/** Session and tool call id of a tool event, `''` when it has none. */
function callKeyOf(event: EventInit): string {
  const payload = event.payload as { id?: unknown; tool_id?: unknown } | null | undefined;
  if (payload === null || typeof payload !== 'object') return '';
  const callId =
    event.type === TOOL_INVOKE || event.type === TOOL_RESULT ? payload.id : payload.tool_id;
  if (typeof callId !== 'string' || callId === '') return '';
  // Marked so that a call key never equals an event id in the same map.
  return `\u0001${callKey(event.causation?.sessionId ?? '', callId)}`;
}
