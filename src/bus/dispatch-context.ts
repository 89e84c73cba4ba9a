import { AsyncLocalStorage } from 'node:async_hooks';
import type { CausationContext } from './bus-event.js';

/**
 * What travels with the code a handler runs, synchronously or asynchronously later: the event
 * being dispatched (for `parentId`/`parentSeq`) and the causation scope.
 */
export interface DispatchFrame {
  /** Owner of the frame: a frame only applies to events emitted on the same bus. */
  readonly bus: object;
  readonly parentId: string;
  readonly parentSeq: number;
  readonly context: CausationContext | undefined;
}

/**
 * The only place in tooltrace that touches AsyncLocalStorage. Every promise, timer,
 * `setImmediate` and async generator started inside `runInFrame` sees the frame.
 */
const storage = new AsyncLocalStorage<DispatchFrame>();

/** Runs `fn` with `frame` as the current dispatch frame. */
export function runInFrame<R>(frame: DispatchFrame, fn: () => R): R {
  return storage.run(frame, fn);
}

/** The dispatch frame the calling code runs in, if any. */
export function currentFrame(): DispatchFrame | undefined {
  return storage.getStore();
}
